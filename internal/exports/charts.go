package exports

import (
	"fmt"
	"strconv"
)

// This file holds one resolver per catalog chart. Each computes object names
// exactly as the chart's helpers do, from the release's values, and cites
// the chart file it follows. Paths are in github.com/bitnami/charts.

// service returns the host and port exports of a Service and its FQDN.
func (c *chartContext) service(r *result, name, namespace string, port int, what string) (string, error) {
	if !isDNSLabel(name) {
		return "", fmt.Errorf("the chart's Service name %q is not a DNS label (check fullnameOverride)", name)
	}
	if !isDNSLabel(namespace) {
		return "", fmt.Errorf("namespace %q is not a DNS label", namespace)
	}
	domain, err := c.v.firstStr(DefaultClusterDomain, "clusterDomain")
	if err != nil {
		return "", err
	}
	host := serviceHost(name, namespace, domain)
	r.add(Export{Key: KeyHost, Kind: Plain, Value: host, Description: "in-cluster DNS name of the " + what + " Service"})
	r.add(Export{Key: KeyPort, Kind: Plain, Value: strconv.Itoa(port), Description: "port of the " + what + " Service"})
	return host, nil
}

// namespaceOf returns the namespace the chart puts its objects in:
// namespaceOverride when set ("common.names.namespace" in
// bitnami/common/templates/_names.tpl), else the release namespace.
func (c *chartContext) namespaceOf() (string, error) {
	return c.v.firstStr(c.namespace, "namespaceOverride")
}

// secretRef checks a Secret reference computed from values.
func secretRef(name, key, keyValue string) (*SecretKeyRef, error) {
	if !isDNSSubdomain(name) {
		return nil, fmt.Errorf("Secret name %q is not a valid name", name)
	}
	if !isSecretKey(key) {
		return nil, fmt.Errorf("Secret key %q (from %s) is not a valid key", key, keyValue)
	}
	return &SecretKeyRef{Name: name, Key: key}, nil
}

func passwordExport(ref *SecretKeyRef, desc string) Export {
	r := *ref
	return Export{Key: KeyPassword, Kind: Secret, Sensitive: true, Secret: &r, Description: desc}
}

// resolvePostgreSQL follows bitnami/postgresql (chart 12.x to 16.x):
//   - templates/_helpers.tpl "postgresql.primary.fullname" (v1 prefix from
//     chart 13): fullname, or "<fullname>-<primary.name>" when
//     architecture=replication; primary/svc.yaml names the Service so.
//   - "postgresql.service.port": global.postgresql.service.ports.postgresql,
//     else primary.service.ports.postgresql (values.yaml default 5432).
//   - "postgresql.username", "postgresql.database": global.postgresql.auth.*
//     override auth.*; an unset database is the image's default, postgres
//     (bitnami/containers postgresql-env.sh POSTGRESQL_DATABASE).
//   - "postgresql.secretName": global.postgresql.auth.existingSecret, else
//     auth.existingSecret, else fullname (templates/secrets.yaml).
//   - "postgresql.adminPasswordKey", "postgresql.userPasswordKey": without an
//     existing Secret the keys are postgres-password and password; with one
//     they come from (global.postgresql.)auth.secretKeys.*, and an empty or
//     "postgres" username uses the admin key.
//   - primary/statefulset.yaml: with no custom user (or "postgres") the
//     application user is postgres, whose password is set only when
//     auth.enablePostgresUser (default true), otherwise ALLOW_EMPTY_PASSWORD.
func resolvePostgreSQL(c *chartContext) (*result, error) {
	v := c.v
	r := &result{}
	full, err := fullname(v, c.release, c.chart)
	if err != nil {
		return nil, err
	}
	svc := full
	if arch, err := v.str("architecture", "standalone"); err != nil {
		return nil, err
	} else if arch == "replication" {
		primary, err := v.str("primary.name", "primary")
		if err != nil {
			return nil, err
		}
		svc = trunc63(full + "-" + primary)
	}
	portPath := "primary.service.ports.postgresql"
	if v.truthy("global.postgresql.service.ports.postgresql", false) {
		portPath = "global.postgresql.service.ports.postgresql"
	}
	port, err := v.port(portPath, 5432)
	if err != nil {
		return nil, err
	}
	ns, err := c.namespaceOf()
	if err != nil {
		return nil, err
	}
	host, err := c.service(r, svc, ns, port, "PostgreSQL primary")
	if err != nil {
		return nil, err
	}
	user, err := v.firstStr("", "global.postgresql.auth.username", "auth.username")
	if err != nil {
		return nil, err
	}
	db, err := v.firstStr("postgres", "global.postgresql.auth.database", "auth.database")
	if err != nil {
		return nil, err
	}
	existing, err := v.firstStr("", "global.postgresql.auth.existingSecret", "auth.existingSecret")
	if err != nil {
		return nil, err
	}
	secretName := full
	if existing != "" {
		secretName = existing
	}
	adminKey, adminFrom := "postgres-password", "the chart's Secret"
	userKey, userFrom := "password", "the chart's Secret"
	if existing != "" {
		adminFrom, userFrom = "auth.secretKeys.adminPasswordKey", "auth.secretKeys.userPasswordKey"
		if adminKey, err = v.firstStr("", "global.postgresql.auth.secretKeys.adminPasswordKey"); err != nil {
			return nil, err
		}
		if adminKey == "" {
			if adminKey, err = v.str("auth.secretKeys.adminPasswordKey", "postgres-password"); err != nil {
				return nil, err
			}
		}
		if userKey, err = v.firstStr("", "global.postgresql.auth.secretKeys.userPasswordKey"); err != nil {
			return nil, err
		}
		if userKey == "" {
			if userKey, err = v.str("auth.secretKeys.userPasswordKey", "password"); err != nil {
				return nil, err
			}
		}
	}

	var password *SecretKeyRef
	if user == "" || user == "postgres" {
		user = "postgres"
		if v.truthy("auth.enablePostgresUser", true) {
			if password, err = secretRef(secretName, adminKey, adminFrom); err != nil {
				return nil, err
			}
		} else {
			r.missing(KeyPassword, "the postgres user has no password: auth.enablePostgresUser is false and no auth.username is set")
		}
	} else if password, err = secretRef(secretName, userKey, userFrom); err != nil {
		return nil, err
	}
	r.add(Export{Key: KeyUsername, Kind: Plain, Value: user, Description: "PostgreSQL user"})
	r.add(Export{Key: KeyDatabase, Kind: Plain, Value: db, Description: "PostgreSQL database"})
	if password != nil {
		r.add(passwordExport(password, "password of the PostgreSQL user"))
	}
	r.add(connURL{
		scheme: "postgresql", user: user, password: password,
		hosts: []string{host + ":" + strconv.Itoa(port)}, path: db,
	}.export("PostgreSQL connection URL"))
	return r, nil
}

// resolveMySQL follows bitnami/mysql (chart 9.x to 12.x):
//   - templates/_helpers.tpl "mysql.primary.fullname": fullname, or
//     "<fullname>-<primary.name>" when architecture=replication;
//     primary/svc.yaml names the Service so, on primary.service.ports.mysql
//     (default 3306, README "MySQL Primary parameters").
//   - "mysql.secretName": auth.existingSecret, else fullname; templates/
//     secrets.yaml writes mysql-root-password and mysql-password, fixed key
//     names also in an existing Secret (values.yaml auth.existingSecret).
//   - primary/statefulset.yaml: MYSQL_USER is set only for a non-empty
//     auth.username, with mysql-password; root always uses
//     mysql-root-password; MYSQL_DATABASE is auth.database (default
//     my_database) when auth.createDatabase (default true).
//   - "mysql.createSecret": no Secret when auth.customPasswordFiles is set
//     without an existing Secret; with auth.usePasswordFiles and
//     customPasswordFiles the passwords come from files.
func resolveMySQL(c *chartContext) (*result, error) {
	return resolveMySQLFamily(c, "mysql", "MySQL")
}

// resolveMariaDB follows bitnami/mariadb (chart 11.x to 20.x), which
// mirrors bitnami/mysql with mariadb-* key names:
//   - templates/_helpers.tpl "mariadb.primary.fullname" and
//     "mariadb.secretName", "mariadb.createSecret" as for MySQL.
//   - templates/secrets.yaml keys mariadb-root-password, mariadb-password.
//   - primary/statefulset.yaml: MARIADB_USER only for a non-empty
//     auth.username; MARIADB_DATABASE is always auth.database (default
//     my_database); Service port primary.service.ports.mysql (default 3306).
func resolveMariaDB(c *chartContext) (*result, error) {
	return resolveMySQLFamily(c, "mariadb", "MariaDB")
}

func resolveMySQLFamily(c *chartContext, prefix, product string) (*result, error) {
	v := c.v
	r := &result{}
	full, err := fullname(v, c.release, c.chart)
	if err != nil {
		return nil, err
	}
	svc := full
	if arch, err := v.str("architecture", "standalone"); err != nil {
		return nil, err
	} else if arch == "replication" {
		primary, err := v.str("primary.name", "primary")
		if err != nil {
			return nil, err
		}
		svc = trunc63(full + "-" + primary)
	}
	port, err := v.port("primary.service.ports.mysql", 3306)
	if err != nil {
		return nil, err
	}
	ns, err := c.namespaceOf()
	if err != nil {
		return nil, err
	}
	host, err := c.service(r, svc, ns, port, product+" primary")
	if err != nil {
		return nil, err
	}
	user, err := v.str("auth.username", "")
	if err != nil {
		return nil, err
	}
	db, err := v.str("auth.database", "my_database")
	if err != nil {
		return nil, err
	}
	if prefix == "mysql" && !v.truthy("auth.createDatabase", true) {
		db = ""
	}
	existing, err := v.str("auth.existingSecret", "")
	if err != nil {
		return nil, err
	}
	secretName := full
	if existing != "" {
		secretName = existing
	}
	key := prefix + "-root-password"
	if user == "" {
		user = "root"
	} else {
		key = prefix + "-password"
	}
	r.add(Export{Key: KeyUsername, Kind: Plain, Value: user, Description: product + " user"})
	if db != "" {
		r.add(Export{Key: KeyDatabase, Kind: Plain, Value: db, Description: product + " database"})
	} else {
		r.missing(KeyDatabase, "the chart creates no database: auth.database is empty or auth.createDatabase is false")
	}
	customFiles := v.truthy("auth.customPasswordFiles", false)
	var password *SecretKeyRef
	switch {
	case customFiles && v.truthy("auth.usePasswordFiles", false):
		r.missing(KeyPassword, "passwords come from auth.customPasswordFiles, not from a Secret")
	case customFiles && existing == "":
		r.missing(KeyPassword, "the chart creates no Secret when auth.customPasswordFiles is set without auth.existingSecret")
	default:
		if password, err = secretRef(secretName, key, "the chart's key names"); err != nil {
			return nil, err
		}
		r.add(passwordExport(password, "password of the "+product+" user"))
	}
	r.add(connURL{
		scheme: "mysql", user: user, password: password,
		hosts: []string{host + ":" + strconv.Itoa(port)}, path: db,
	}.export(product + " connection URL"))
	return r, nil
}

// resolveRedis follows bitnami/redis (chart 17.x to 21.x):
//   - templates/secret.yaml (its service-binding Secret spells out the
//     chart's own host and port): without Sentinel the host is
//     "<fullname>-master" on master.service.ports.redis (default 6379,
//     master/service.yaml); with sentinel.enabled it is the fullname Service
//     on sentinel.service.ports.redis (default 6379, sentinel/service.yaml),
//     which reaches every node, primary or replica.
//   - templates/_helpers.tpl "redis.secretName": auth.existingSecret, else
//     fullname; "redis.secretPasswordKey": auth.existingSecretPasswordKey
//     when an existing Secret is set, else redis-password. The chart creates
//     its Secret only when auth.enabled (default true).
//   - tls.enabled switches clients to TLS (rediss://).
func resolveRedis(c *chartContext) (*result, error) {
	v := c.v
	r := &result{}
	full, err := fullname(v, c.release, c.chart)
	if err != nil {
		return nil, err
	}
	svc, port := full+"-master", 0
	what := "Redis master"
	if v.truthy("sentinel.enabled", false) {
		svc, what = full, "Redis (Sentinel nodes)"
		port, err = v.port("sentinel.service.ports.redis", 6379)
	} else {
		port, err = v.port("master.service.ports.redis", 6379)
	}
	if err != nil {
		return nil, err
	}
	ns, err := c.namespaceOf()
	if err != nil {
		return nil, err
	}
	host, err := c.service(r, svc, ns, port, what)
	if err != nil {
		return nil, err
	}
	var password *SecretKeyRef
	if v.truthy("auth.enabled", true) {
		existing, err := v.str("auth.existingSecret", "")
		if err != nil {
			return nil, err
		}
		name, key, from := full, "redis-password", "the chart's Secret"
		if existing != "" {
			name, from = existing, "auth.existingSecretPasswordKey"
			if k, err := v.str("auth.existingSecretPasswordKey", ""); err != nil {
				return nil, err
			} else if k != "" {
				key = k
			}
		}
		if password, err = secretRef(name, key, from); err != nil {
			return nil, err
		}
		r.add(passwordExport(password, "Redis password"))
	} else {
		r.missing(KeyPassword, "auth.enabled is false: Redis runs without a password")
	}
	scheme := "redis"
	if v.truthy("tls.enabled", false) {
		scheme = "rediss"
	}
	r.add(connURL{
		scheme: scheme, password: password,
		hosts: []string{host + ":" + strconv.Itoa(port)},
	}.export("Redis connection URL"))
	return r, nil
}

// resolveMongoDB follows bitnami/mongodb (chart 13.x to 16.x):
//   - templates/_helpers.tpl "mongodb.service.nameOverride":
//     service.nameOverride, else "<fullname>-headless" for
//     architecture=replicaset, else fullname; standalone/svc.yaml and
//     replicaset/headless-svc.yaml use it, on service.ports.mongodb
//     (default 27017). "mongodb.namespace": global.namespaceOverride.
//   - templates/NOTES.txt lists replica set members as
//     "<fullname>-<i>.<fullname>-headless.<namespace>.svc.<clusterDomain>"
//     for i below replicaCount (default 2); replicaSetName defaults to rs0.
//   - "mongodb.secretName": auth.existingSecret, else fullname; templates/
//     secrets.yaml writes mongodb-root-password and, for custom users,
//     mongodb-passwords: the users' passwords joined by commas. The Secret
//     exists only when auth.enabled (default true).
//   - "mongodb.customUsers", "mongodb.customDatabases": auth.username and
//     auth.database (deprecated) followed by auth.usernames and
//     auth.databases; the root user is auth.rootUser (default root) and
//     authenticates against the admin database.
//   - tls.enabled makes the server require TLS (tls.mode, default
//     requireTLS), so the URI asks for tls=true.
func resolveMongoDB(c *chartContext) (*result, error) {
	v := c.v
	r := &result{}
	full, err := fullname(v, c.release, c.chart)
	if err != nil {
		return nil, err
	}
	arch, err := v.str("architecture", "standalone")
	if err != nil {
		return nil, err
	}
	replicaset := arch == "replicaset"
	svc := full
	if replicaset {
		svc = full + "-headless"
	}
	if svc, err = v.firstStr(svc, "service.nameOverride"); err != nil {
		return nil, err
	}
	port, err := v.port("service.ports.mongodb", 27017)
	if err != nil {
		return nil, err
	}
	ns, err := v.firstStr("", "global.namespaceOverride")
	if err != nil {
		return nil, err
	}
	if ns == "" {
		if ns, err = c.namespaceOf(); err != nil {
			return nil, err
		}
	}
	what := "MongoDB"
	if replicaset {
		what = "MongoDB replica set headless"
	}
	host, err := c.service(r, svc, ns, port, what)
	if err != nil {
		return nil, err
	}
	p := strconv.Itoa(port)
	hosts := []string{host + ":" + p}
	var query []string
	if replicaset {
		n, err := v.count("replicaCount", 2)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, fmt.Errorf("values replicaCount: a replica set needs at least one member")
		}
		rs, err := v.str("replicaSetName", "rs0")
		if err != nil {
			return nil, err
		}
		hosts = hosts[:0]
		for i := range n {
			hosts = append(hosts, full+"-"+strconv.Itoa(i)+"."+host+":"+p)
		}
		query = append(query, queryPair("replicaSet", rs))
	}

	users, err := customList(v, "auth.username", "auth.usernames")
	if err != nil {
		return nil, err
	}
	dbs, err := customList(v, "auth.database", "auth.databases")
	if err != nil {
		return nil, err
	}
	if v.truthy("tls.enabled", false) {
		query = append(query, queryPair("tls", "true"))
	}
	if len(users) != len(dbs) {
		return nil, fmt.Errorf("values auth.usernames and auth.databases must have the same length (the chart refuses them otherwise)")
	}
	conn := connURL{scheme: "mongodb", hosts: hosts, query: query}
	switch {
	case !v.truthy("auth.enabled", true):
		reason := "auth.enabled is false: MongoDB runs without users"
		r.missing(KeyUsername, reason)
		r.missing(KeyPassword, reason)
		if len(dbs) == 1 {
			conn.path = dbs[0]
			r.add(Export{Key: KeyDatabase, Kind: Plain, Value: dbs[0], Description: "MongoDB database"})
		} else {
			r.missing(KeyDatabase, "the chart creates no single custom database (auth.databases)")
		}
	case len(users) > 1:
		reason := fmt.Sprintf("auth.usernames lists %d users; the chart keeps their passwords comma-joined in one Secret key, which cannot be referenced alone", len(users))
		for _, k := range []string{KeyUsername, KeyPassword, KeyDatabase, KeyConnectionString} {
			r.missing(k, reason)
		}
		return r, nil
	default:
		existing, err := v.str("auth.existingSecret", "")
		if err != nil {
			return nil, err
		}
		name := full
		if existing != "" {
			name = existing
		}
		user, key, desc := "", "", ""
		if len(users) == 1 {
			user, key, desc = users[0], "mongodb-passwords", "password of the MongoDB custom user"
			conn.path = dbs[0]
			r.add(Export{Key: KeyDatabase, Kind: Plain, Value: dbs[0], Description: "MongoDB database of the custom user"})
		} else {
			if user, err = v.str("auth.rootUser", "root"); err != nil {
				return nil, err
			}
			key, desc = "mongodb-root-password", "password of the MongoDB root user"
			conn.query = append(conn.query, queryPair("authSource", "admin"))
			r.missing(KeyDatabase, "no custom database: set auth.usernames and auth.databases")
		}
		ref, err := secretRef(name, key, "the chart's key names")
		if err != nil {
			return nil, err
		}
		conn.user, conn.password = user, ref
		r.add(Export{Key: KeyUsername, Kind: Plain, Value: user, Description: "MongoDB user"})
		r.add(passwordExport(ref, desc))
	}
	r.add(conn.export("MongoDB connection URI"))
	return r, nil
}

// customList joins a deprecated single value and its list replacement, as
// "mongodb.customUsers" and "mongodb.customDatabases" do.
func customList(v values, single, list string) ([]string, error) {
	var out []string
	s, err := v.str(single, "")
	if err != nil {
		return nil, err
	}
	if s != "" {
		out = append(out, s)
	}
	l, err := v.strList(list)
	if err != nil {
		return nil, err
	}
	return append(out, l...), nil
}

// resolveRabbitMQ follows bitnami/rabbitmq (chart 11.x to 16.x):
//   - templates/svc.yaml: the fullname Service, AMQP on service.ports.amqp
//     (default 5672, README "Exposure parameters").
//   - templates/_helpers.tpl "rabbitmq.secretPasswordName":
//     auth.existingPasswordSecret, else fullname; "rabbitmq.secretPasswordKey":
//     auth.existingSecretPasswordKey when an existing Secret is set, else
//     rabbitmq-password.
//   - templates/statefulset.yaml: RABBITMQ_USERNAME is auth.username
//     (default user); connections use the default virtual host "/".
func resolveRabbitMQ(c *chartContext) (*result, error) {
	v := c.v
	r := &result{}
	full, err := fullname(v, c.release, c.chart)
	if err != nil {
		return nil, err
	}
	port, err := v.port("service.ports.amqp", 5672)
	if err != nil {
		return nil, err
	}
	ns, err := c.namespaceOf()
	if err != nil {
		return nil, err
	}
	host, err := c.service(r, full, ns, port, "RabbitMQ")
	if err != nil {
		return nil, err
	}
	user, err := v.str("auth.username", "user")
	if err != nil {
		return nil, err
	}
	if user == "" {
		return nil, fmt.Errorf("values auth.username: must not be empty")
	}
	existing, err := v.str("auth.existingPasswordSecret", "")
	if err != nil {
		return nil, err
	}
	name, key, from := full, "rabbitmq-password", "the chart's Secret"
	if existing != "" {
		name, from = existing, "auth.existingSecretPasswordKey"
		if k, err := v.str("auth.existingSecretPasswordKey", ""); err != nil {
			return nil, err
		} else if k != "" {
			key = k
		}
	}
	ref, err := secretRef(name, key, from)
	if err != nil {
		return nil, err
	}
	r.add(Export{Key: KeyUsername, Kind: Plain, Value: user, Description: "RabbitMQ user"})
	r.add(passwordExport(ref, "password of the RabbitMQ user"))
	r.add(connURL{
		scheme: "amqp", user: user, password: ref,
		hosts: []string{host + ":" + strconv.Itoa(port)},
	}.export("AMQP connection URL (default virtual host)"))
	return r, nil
}
