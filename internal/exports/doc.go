// Package exports knows what each addon and workload publishes to other
// components, and how to wire one of those exports into a container env var
// without ever writing a secret value to Git.
//
// # Exports
//
// An Export is one of three kinds:
//   - Plain: a literal that is safe for Git (host, port, database, a user
//     name taken from the chart values).
//   - Secret: a key of a Kubernetes Secret, read through
//     valueFrom.secretKeyRef; the chart creates the Secret (or the user
//     names an existing one in the chart values).
//   - Composed: a value built from Parts with Kubernetes $(VAR) expansion,
//     such as postgresql://app:$(PASSWORD)@host:5432/app, where the password
//     part comes from a Secret.
//
// ForAddon computes the exports of an addon from its type and chart values;
// ForWorkload those of a workload (url, host, port, address). Lookup returns one
// export and says why a key is unknown or unavailable. Wire turns an export
// into the env vars to emit for one export_ref, and Checksum hashes the
// resolved exports of a consumer for its pod-template annotation.
//
// # Wiring a composed export
//
// Wire emits one hidden env var per part, named HiddenName(consumer, part):
// "FW_" + the consumer env var name + "_" + the part name, so DATABASE_URL
// gets FW_DATABASE_URL_PASSWORD. The hidden vars come first and the
// consumer var last, because Kubernetes expands $(VAR) only to vars listed
// earlier in the same container. Literal text is escaped as Kubernetes
// requires ("$" written "$$"). Kubernetes inserts the password as it is,
// with no URL escaping: the charts below generate alphanumeric passwords,
// which are URL-safe, but a hand-chosen password used inside a connection
// string must avoid URL delimiters such as @ : / ? # and %.
//
// # Names
//
// Render installs each addon as the Helm release <app>-<component> and sets
// the value fullnameOverride to the same name unless the user set it
// (WithFullnameOverride). The resolvers compute every object name exactly as
// the chart's helpers do from the values: "common.names.fullname" (from
// bitnami/common templates/_names.tpl: fullnameOverride, else the release
// name if it contains the chart name or nameOverride, else
// "<release>-<name>", cut to 63 characters), namespaceOverride, and
// clusterDomain (default cluster.local) for the in-cluster host
// <service>.<namespace>.svc.<clusterDomain>. Values that a chart passes
// through tpl cannot hold template expressions here.
//
// # Catalog
//
// The catalog covers the Bitnami charts of https://charts.bitnami.com/bitnami.
// Each fact comes from the chart file named (paths in
// github.com/bitnami/charts, under bitnami/<chart>/):
//
// postgresql (charts 12.x–16.x); exports host, port, database, username,
// password, connection_string (postgresql://):
//   - Service: templates/_helpers.tpl "postgresql.primary.fullname" and
//     primary/svc.yaml: <fullname>, or <fullname>-<primary.name> (default
//     "primary") when architecture=replication.
//   - Port: "postgresql.service.port": global.postgresql.service.ports.postgresql,
//     else primary.service.ports.postgresql, default 5432 (values.yaml).
//   - Secret: "postgresql.secretName": global.postgresql.auth.existingSecret,
//     else auth.existingSecret, else <fullname> (templates/secrets.yaml).
//   - Keys: "postgresql.userPasswordKey", "postgresql.adminPasswordKey":
//     password and postgres-password in the chart's Secret; with an existing
//     Secret, (global.postgresql.)auth.secretKeys.userPasswordKey and
//     .adminPasswordKey (defaults password, postgres-password).
//   - User: auth.username (global.postgresql.auth.username wins). Empty or
//     "postgres" means the postgres admin user and the admin key; its
//     password exists only with auth.enablePostgresUser (default true,
//     primary/statefulset.yaml sets ALLOW_EMPTY_PASSWORD otherwise), so
//     password is unavailable and connection_string has no password.
//   - Database: auth.database (global wins), else the image default
//     "postgres" (bitnami/containers postgresql-env.sh).
//
// mysql (charts 9.x–12.x) and mariadb (charts 11.x–20.x); exports host,
// port, database, username, password, connection_string (mysql://):
//   - Service: "mysql.primary.fullname" / "mariadb.primary.fullname"
//     (templates/_helpers.tpl) and primary/svc.yaml: <fullname>, or
//     <fullname>-<primary.name> when architecture=replication; port
//     primary.service.ports.mysql, default 3306 (README).
//   - Secret: "mysql.secretName" / "mariadb.secretName": auth.existingSecret,
//     else <fullname>; fixed keys mysql-root-password, mysql-password
//     (mariadb-root-password, mariadb-password), also in an existing Secret
//     (values.yaml auth.existingSecret; templates/secrets.yaml).
//   - User: auth.username with the user key; empty means root with the root
//     key (primary/statefulset.yaml sets MYSQL_USER/MARIADB_USER only for a
//     non-empty name).
//   - Database: auth.database, default my_database; for mysql only when
//     auth.createDatabase (default true).
//   - No Secret password with auth.customPasswordFiles ("mysql.createSecret").
//
// redis (charts 17.x–21.x); exports host, port, password, connection_string
// (redis://:PASSWORD@host:port, rediss:// with tls.enabled):
//   - Service: <fullname>-master on master.service.ports.redis (default
//     6379; master/service.yaml); with sentinel.enabled the <fullname>
//     Service on sentinel.service.ports.redis (sentinel/service.yaml), which
//     reaches every node. templates/secret.yaml's service binding uses the
//     same host and port.
//   - Secret: "redis.secretName": auth.existingSecret, else <fullname>; key
//     "redis.secretPasswordKey": auth.existingSecretPasswordKey with an
//     existing Secret, else redis-password. No password when auth.enabled
//     is false.
//
// mongodb (charts 13.x–16.x); exports host, port, database, username,
// password, connection_string (mongodb://):
//   - Service: "mongodb.service.nameOverride": service.nameOverride, else
//     <fullname>-headless for architecture=replicaset, else <fullname>;
//     port service.ports.mongodb, default 27017 (standalone/svc.yaml,
//     replicaset/headless-svc.yaml). Namespace: global.namespaceOverride.
//   - Replica set: members <fullname>-<i>.<headless host> for i below
//     replicaCount (default 2), replicaSet=<replicaSetName> (default rs0),
//     as templates/NOTES.txt lists them.
//   - Secret: "mongodb.secretName": auth.existingSecret, else <fullname>;
//     mongodb-root-password for the root user auth.rootUser (default root,
//     authSource=admin), mongodb-passwords for custom users
//     (templates/secrets.yaml). That key holds all custom users' passwords
//     joined by commas, so with more than one user in auth.usernames the
//     user, password, database and connection_string are unavailable.
//   - No users when auth.enabled is false; tls.enabled adds tls=true (the
//     server then requires TLS, tls.mode default requireTLS).
//
// rabbitmq (charts 11.x–16.x); exports host, port, username, password,
// connection_string (amqp://, default virtual host):
//   - Service: <fullname>, AMQP port service.ports.amqp, default 5672 (README).
//   - Secret: "rabbitmq.secretPasswordName": auth.existingPasswordSecret,
//     else <fullname>; key "rabbitmq.secretPasswordKey":
//     auth.existingSecretPasswordKey with an existing Secret, else
//     rabbitmq-password (templates/_helpers.tpl).
//   - User: auth.username, default "user" (templates/statefulset.yaml).
//
// # Generic addons
//
// A generic addon declares its exports (Declared): a literal value, a
// Secret key, or a value that refers to other declared exports as $(key),
// with $$ for a literal "$". A value referring to a Secret export becomes a
// Composed export whose part is named after the key (upper case, other
// characters than letters, digits and "_" replaced by "_"):
//
//   - {key: password, secret_ref: {name: db-auth, key: password}}
//   - {key: url, value: "postgres://app:$(password)@db.shop.svc:5432/app"}
package exports
