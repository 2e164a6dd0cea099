package exports

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// want is what a variant must resolve to. conn is the connection string: the
// template of a Composed export or the value of a Plain one.
type want struct {
	host, port, user, db string
	password             *SecretKeyRef
	conn                 string
	missing              []string // keys that must be unavailable
}

type variant struct {
	name string
	in   AddonInput
	want want
}

// rendered is an addon as render installs it: release <app>-<component> in
// the project namespace, with fullnameOverride defaulted.
func rendered(typ, release string, vals map[string]any) AddonInput {
	return AddonInput{Type: typ, Release: release, Namespace: "shop", Values: WithFullnameOverride(vals, release)}
}

type m = map[string]any

func ref(name, key string) *SecretKeyRef { return &SecretKeyRef{Name: name, Key: key} }

const ns = ".shop.svc.cluster.local"

func variants() []variant {
	return []variant{
		// postgresql
		{"postgresql/custom-user", rendered("postgresql", "my-api-postgres", m{"auth": m{"database": "myapp", "username": "myapp"}}), want{
			host: "my-api-postgres" + ns, port: "5432", user: "myapp", db: "myapp",
			password: ref("my-api-postgres", "password"),
			conn:     "postgresql://myapp:$(PASSWORD)@my-api-postgres" + ns + ":5432/myapp",
		}},
		{"postgresql/defaults", rendered("postgresql", "app-db", nil), want{
			host: "app-db" + ns, port: "5432", user: "postgres", db: "postgres",
			password: ref("app-db", "postgres-password"),
			conn:     "postgresql://postgres:$(PASSWORD)@app-db" + ns + ":5432/postgres",
		}},
		{"postgresql/username-postgres", rendered("postgresql", "app-db", m{"auth": m{"username": "postgres", "database": "shop"}}), want{
			host: "app-db" + ns, port: "5432", user: "postgres", db: "shop",
			password: ref("app-db", "postgres-password"),
			conn:     "postgresql://postgres:$(PASSWORD)@app-db" + ns + ":5432/shop",
		}},
		{"postgresql/replication", rendered("postgresql", "app-db", m{"architecture": "replication", "auth": m{"username": "app", "database": "app"}}), want{
			host: "app-db-primary" + ns, port: "5432", user: "app", db: "app",
			password: ref("app-db", "password"),
			conn:     "postgresql://app:$(PASSWORD)@app-db-primary" + ns + ":5432/app",
		}},
		{"postgresql/replication-primary-name", rendered("postgresql", "app-db", m{"architecture": "replication", "primary": m{"name": "leader"}}), want{
			host: "app-db-leader" + ns, port: "5432", user: "postgres", db: "postgres",
			password: ref("app-db", "postgres-password"),
			conn:     "postgresql://postgres:$(PASSWORD)@app-db-leader" + ns + ":5432/postgres",
		}},
		{"postgresql/existing-secret-user", rendered("postgresql", "app-db", m{"auth": m{
			"username": "app", "database": "app", "existingSecret": "pg-creds",
			"secretKeys": m{"userPasswordKey": "app-password"},
		}}), want{
			host: "app-db" + ns, port: "5432", user: "app", db: "app",
			password: ref("pg-creds", "app-password"),
			conn:     "postgresql://app:$(PASSWORD)@app-db" + ns + ":5432/app",
		}},
		{"postgresql/existing-secret-default-keys", rendered("postgresql", "app-db", m{"auth": m{"username": "app", "existingSecret": "pg-creds"}}), want{
			host: "app-db" + ns, port: "5432", user: "app", db: "postgres",
			password: ref("pg-creds", "password"),
			conn:     "postgresql://app:$(PASSWORD)@app-db" + ns + ":5432/postgres",
		}},
		{"postgresql/existing-secret-admin", rendered("postgresql", "app-db", m{"auth": m{
			"existingSecret": "pg-creds", "secretKeys": m{"adminPasswordKey": "admin-pw", "userPasswordKey": "ignored"},
		}}), want{
			host: "app-db" + ns, port: "5432", user: "postgres", db: "postgres",
			password: ref("pg-creds", "admin-pw"),
			conn:     "postgresql://postgres:$(PASSWORD)@app-db" + ns + ":5432/postgres",
		}},
		{"postgresql/existing-secret-username-postgres", rendered("postgresql", "app-db", m{"auth": m{
			"username": "postgres", "existingSecret": "pg-creds", "secretKeys": m{"adminPasswordKey": "admin-pw", "userPasswordKey": "user-pw"},
		}}), want{
			host: "app-db" + ns, port: "5432", user: "postgres", db: "postgres",
			password: ref("pg-creds", "admin-pw"),
			conn:     "postgresql://postgres:$(PASSWORD)@app-db" + ns + ":5432/postgres",
		}},
		{"postgresql/globals", rendered("postgresql", "app-db", m{
			"auth": m{"username": "local", "database": "local", "existingSecret": "local-secret"},
			"global": m{"postgresql": m{
				"auth":    m{"username": "g", "database": "gdb", "existingSecret": "g-secret", "secretKeys": m{"userPasswordKey": "g-key"}},
				"service": m{"ports": m{"postgresql": 6543}},
			}},
		}), want{
			host: "app-db" + ns, port: "6543", user: "g", db: "gdb",
			password: ref("g-secret", "g-key"),
			conn:     "postgresql://g:$(PASSWORD)@app-db" + ns + ":6543/gdb",
		}},
		{"postgresql/global-port-empty", rendered("postgresql", "app-db", m{
			"global":  m{"postgresql": m{"service": m{"ports": m{"postgresql": ""}}}},
			"primary": m{"service": m{"ports": m{"postgresql": 15432}}},
		}), want{
			host: "app-db" + ns, port: "15432", user: "postgres", db: "postgres",
			password: ref("app-db", "postgres-password"),
			conn:     "postgresql://postgres:$(PASSWORD)@app-db" + ns + ":15432/postgres",
		}},
		{"postgresql/no-postgres-password", rendered("postgresql", "app-db", m{"auth": m{"enablePostgresUser": false}}), want{
			host: "app-db" + ns, port: "5432", user: "postgres", db: "postgres",
			conn:    "postgresql://postgres@app-db" + ns + ":5432/postgres",
			missing: []string{KeyPassword},
		}},
		{"postgresql/custom-user-without-postgres-user", rendered("postgresql", "app-db", m{"auth": m{"enablePostgresUser": false, "username": "app"}}), want{
			host: "app-db" + ns, port: "5432", user: "app", db: "postgres",
			password: ref("app-db", "password"),
			conn:     "postgresql://app:$(PASSWORD)@app-db" + ns + ":5432/postgres",
		}},
		{"postgresql/user-fullname-override", rendered("postgresql", "app-db", m{"fullnameOverride": "main-pg"}), want{
			host: "main-pg" + ns, port: "5432", user: "postgres", db: "postgres",
			password: ref("main-pg", "postgres-password"),
			conn:     "postgresql://postgres:$(PASSWORD)@main-pg" + ns + ":5432/postgres",
		}},
		{"postgresql/no-override-release-without-chart-name", AddonInput{Type: "postgresql", Release: "pg", Namespace: "data"}, want{
			host: "pg-postgresql.data.svc.cluster.local", port: "5432", user: "postgres", db: "postgres",
			password: ref("pg-postgresql", "postgres-password"),
			conn:     "postgresql://postgres:$(PASSWORD)@pg-postgresql.data.svc.cluster.local:5432/postgres",
		}},
		{"postgresql/no-override-release-with-chart-name", AddonInput{Type: "postgresql", Release: "shared-postgresql", Namespace: "data"}, want{
			host: "shared-postgresql.data.svc.cluster.local", port: "5432", user: "postgres", db: "postgres",
			password: ref("shared-postgresql", "postgres-password"),
			conn:     "postgresql://postgres:$(PASSWORD)@shared-postgresql.data.svc.cluster.local:5432/postgres",
		}},
		{"postgresql/user-empty-fullname-override-name-override", rendered("postgresql", "db", m{"fullnameOverride": "", "nameOverride": "pgsql"}), want{
			host: "db-pgsql" + ns, port: "5432", user: "postgres", db: "postgres",
			password: ref("db-pgsql", "postgres-password"),
			conn:     "postgresql://postgres:$(PASSWORD)@db-pgsql" + ns + ":5432/postgres",
		}},
		{"postgresql/namespace-override-cluster-domain", rendered("postgresql", "app-db", m{"namespaceOverride": "data", "clusterDomain": "corp.internal"}), want{
			host: "app-db.data.svc.corp.internal", port: "5432", user: "postgres", db: "postgres",
			password: ref("app-db", "postgres-password"),
			conn:     "postgresql://postgres:$(PASSWORD)@app-db.data.svc.corp.internal:5432/postgres",
		}},
		{"postgresql/escaped-names", rendered("postgresql", "app-db", m{"auth": m{"username": "a$b@c", "database": "my db"}}), want{
			host: "app-db" + ns, port: "5432", user: "a$b@c", db: "my db",
			password: ref("app-db", "password"),
			conn:     "postgresql://a$$b%40c:$(PASSWORD)@app-db" + ns + ":5432/my%20db",
		}},

		// mysql
		{"mysql/defaults", rendered("mysql", "shop-mysql", nil), want{
			host: "shop-mysql" + ns, port: "3306", user: "root", db: "my_database",
			password: ref("shop-mysql", "mysql-root-password"),
			conn:     "mysql://root:$(PASSWORD)@shop-mysql" + ns + ":3306/my_database",
		}},
		{"mysql/custom-user", rendered("mysql", "shop-mysql", m{"auth": m{"username": "app", "database": "orders"}}), want{
			host: "shop-mysql" + ns, port: "3306", user: "app", db: "orders",
			password: ref("shop-mysql", "mysql-password"),
			conn:     "mysql://app:$(PASSWORD)@shop-mysql" + ns + ":3306/orders",
		}},
		{"mysql/replication-port", rendered("mysql", "shop-mysql", m{"architecture": "replication", "primary": m{"service": m{"ports": m{"mysql": "3307"}}}}), want{
			host: "shop-mysql-primary" + ns, port: "3307", user: "root", db: "my_database",
			password: ref("shop-mysql", "mysql-root-password"),
			conn:     "mysql://root:$(PASSWORD)@shop-mysql-primary" + ns + ":3307/my_database",
		}},
		{"mysql/no-database", rendered("mysql", "shop-mysql", m{"auth": m{"createDatabase": false, "username": "app"}}), want{
			host: "shop-mysql" + ns, port: "3306", user: "app",
			password: ref("shop-mysql", "mysql-password"),
			conn:     "mysql://app:$(PASSWORD)@shop-mysql" + ns + ":3306",
			missing:  []string{KeyDatabase},
		}},
		{"mysql/existing-secret", rendered("mysql", "shop-mysql", m{"auth": m{"username": "app", "existingSecret": "mysql-creds"}}), want{
			host: "shop-mysql" + ns, port: "3306", user: "app", db: "my_database",
			password: ref("mysql-creds", "mysql-password"),
			conn:     "mysql://app:$(PASSWORD)@shop-mysql" + ns + ":3306/my_database",
		}},
		{"mysql/custom-password-files", rendered("mysql", "shop-mysql", m{"auth": m{
			"username": "app", "usePasswordFiles": true, "customPasswordFiles": m{"root": "/vault/root", "user": "/vault/user"},
		}}), want{
			host: "shop-mysql" + ns, port: "3306", user: "app", db: "my_database",
			conn:    "mysql://app@shop-mysql" + ns + ":3306/my_database",
			missing: []string{KeyPassword},
		}},

		// mariadb
		{"mariadb/defaults", rendered("mariadb", "blog-db", nil), want{
			host: "blog-db" + ns, port: "3306", user: "root", db: "my_database",
			password: ref("blog-db", "mariadb-root-password"),
			conn:     "mysql://root:$(PASSWORD)@blog-db" + ns + ":3306/my_database",
		}},
		{"mariadb/custom-user-replication", rendered("mariadb", "blog-db", m{"architecture": "replication", "primary": m{"name": "main"}, "auth": m{"username": "wp", "database": "wordpress", "createDatabase": false}}), want{
			host: "blog-db-main" + ns, port: "3306", user: "wp", db: "wordpress",
			password: ref("blog-db", "mariadb-password"),
			conn:     "mysql://wp:$(PASSWORD)@blog-db-main" + ns + ":3306/wordpress",
		}},
		{"mariadb/existing-secret", rendered("mariadb", "blog-db", m{"auth": m{"existingSecret": "maria-creds"}}), want{
			host: "blog-db" + ns, port: "3306", user: "root", db: "my_database",
			password: ref("maria-creds", "mariadb-root-password"),
			conn:     "mysql://root:$(PASSWORD)@blog-db" + ns + ":3306/my_database",
		}},

		// redis
		{"redis/defaults", rendered("redis", "api-cache", nil), want{
			host: "api-cache-master" + ns, port: "6379",
			password: ref("api-cache", "redis-password"),
			conn:     "redis://:$(PASSWORD)@api-cache-master" + ns + ":6379",
		}},
		{"redis/standalone-port", rendered("redis", "api-cache", m{"architecture": "standalone", "master": m{"service": m{"ports": m{"redis": 6380}}}}), want{
			host: "api-cache-master" + ns, port: "6380",
			password: ref("api-cache", "redis-password"),
			conn:     "redis://:$(PASSWORD)@api-cache-master" + ns + ":6380",
		}},
		{"redis/sentinel", rendered("redis", "api-cache", m{"sentinel": m{"enabled": true, "service": m{"ports": m{"redis": 16379}}}}), want{
			host: "api-cache" + ns, port: "16379",
			password: ref("api-cache", "redis-password"),
			conn:     "redis://:$(PASSWORD)@api-cache" + ns + ":16379",
		}},
		{"redis/existing-secret-key", rendered("redis", "api-cache", m{"auth": m{"existingSecret": "redis-auth", "existingSecretPasswordKey": "pw"}}), want{
			host: "api-cache-master" + ns, port: "6379",
			password: ref("redis-auth", "pw"),
			conn:     "redis://:$(PASSWORD)@api-cache-master" + ns + ":6379",
		}},
		{"redis/key-without-existing-secret", rendered("redis", "api-cache", m{"auth": m{"existingSecretPasswordKey": "pw"}}), want{
			host: "api-cache-master" + ns, port: "6379",
			password: ref("api-cache", "redis-password"),
			conn:     "redis://:$(PASSWORD)@api-cache-master" + ns + ":6379",
		}},
		{"redis/no-auth", rendered("redis", "api-cache", m{"auth": m{"enabled": false}}), want{
			host: "api-cache-master" + ns, port: "6379",
			conn:    "redis://api-cache-master" + ns + ":6379",
			missing: []string{KeyPassword},
		}},
		{"redis/tls", rendered("redis", "api-cache", m{"tls": m{"enabled": true, "autoGenerated": true}}), want{
			host: "api-cache-master" + ns, port: "6379",
			password: ref("api-cache", "redis-password"),
			conn:     "rediss://:$(PASSWORD)@api-cache-master" + ns + ":6379",
		}},

		// mongodb
		{"mongodb/defaults-root", rendered("mongodb", "docs-db", nil), want{
			host: "docs-db" + ns, port: "27017", user: "root",
			password: ref("docs-db", "mongodb-root-password"),
			conn:     "mongodb://root:$(PASSWORD)@docs-db" + ns + ":27017/?authSource=admin",
			missing:  []string{KeyDatabase},
		}},
		{"mongodb/custom-user", rendered("mongodb", "docs-db", m{"auth": m{"usernames": []any{"app"}, "databases": []any{"docs"}}}), want{
			host: "docs-db" + ns, port: "27017", user: "app", db: "docs",
			password: ref("docs-db", "mongodb-passwords"),
			conn:     "mongodb://app:$(PASSWORD)@docs-db" + ns + ":27017/docs",
		}},
		{"mongodb/deprecated-single-user", rendered("mongodb", "docs-db", m{"auth": m{"username": "app", "database": "docs"}}), want{
			host: "docs-db" + ns, port: "27017", user: "app", db: "docs",
			password: ref("docs-db", "mongodb-passwords"),
			conn:     "mongodb://app:$(PASSWORD)@docs-db" + ns + ":27017/docs",
		}},
		{"mongodb/replicaset", rendered("mongodb", "docs-db", m{"architecture": "replicaset", "replicaCount": 3, "auth": m{"usernames": []any{"app"}, "databases": []any{"docs"}}}), want{
			host: "docs-db-headless" + ns, port: "27017", user: "app", db: "docs",
			password: ref("docs-db", "mongodb-passwords"),
			conn: "mongodb://app:$(PASSWORD)@docs-db-0.docs-db-headless" + ns + ":27017,docs-db-1.docs-db-headless" + ns +
				":27017,docs-db-2.docs-db-headless" + ns + ":27017/docs?replicaSet=rs0",
		}},
		{"mongodb/replicaset-root-defaults", rendered("mongodb", "docs-db", m{"architecture": "replicaset", "replicaSetName": "main", "auth": m{"rootUser": "admin"}}), want{
			host: "docs-db-headless" + ns, port: "27017", user: "admin",
			password: ref("docs-db", "mongodb-root-password"),
			conn: "mongodb://admin:$(PASSWORD)@docs-db-0.docs-db-headless" + ns + ":27017,docs-db-1.docs-db-headless" + ns +
				":27017/?replicaSet=main&authSource=admin",
			missing: []string{KeyDatabase},
		}},
		{"mongodb/service-name-override", rendered("mongodb", "docs-db", m{"service": m{"nameOverride": "mongo", "ports": m{"mongodb": 27018}}, "auth": m{"existingSecret": "mongo-creds"}}), want{
			host: "mongo" + ns, port: "27018", user: "root",
			password: ref("mongo-creds", "mongodb-root-password"),
			conn:     "mongodb://root:$(PASSWORD)@mongo" + ns + ":27018/?authSource=admin",
			missing:  []string{KeyDatabase},
		}},
		{"mongodb/global-namespace-override", rendered("mongodb", "docs-db", m{"global": m{"namespaceOverride": "data"}, "namespaceOverride": "ignored"}), want{
			host: "docs-db.data.svc.cluster.local", port: "27017", user: "root",
			password: ref("docs-db", "mongodb-root-password"),
			conn:     "mongodb://root:$(PASSWORD)@docs-db.data.svc.cluster.local:27017/?authSource=admin",
			missing:  []string{KeyDatabase},
		}},
		{"mongodb/tls", rendered("mongodb", "docs-db", m{"tls": m{"enabled": true}, "auth": m{"usernames": []any{"app"}, "databases": []any{"docs"}}}), want{
			host: "docs-db" + ns, port: "27017", user: "app", db: "docs",
			password: ref("docs-db", "mongodb-passwords"),
			conn:     "mongodb://app:$(PASSWORD)@docs-db" + ns + ":27017/docs?tls=true",
		}},
		{"mongodb/several-users", rendered("mongodb", "docs-db", m{"auth": m{"usernames": []any{"a", "b"}, "databases": []any{"da", "db"}}}), want{
			host: "docs-db" + ns, port: "27017",
			missing: []string{KeyConnectionString, KeyDatabase, KeyPassword, KeyUsername},
		}},
		{"mongodb/no-auth", rendered("mongodb", "docs-db", m{"auth": m{"enabled": false}}), want{
			host: "docs-db" + ns, port: "27017",
			conn:    "mongodb://docs-db" + ns + ":27017",
			missing: []string{KeyDatabase, KeyPassword, KeyUsername},
		}},

		// rabbitmq
		{"rabbitmq/defaults", rendered("rabbitmq", "jobs-mq", nil), want{
			host: "jobs-mq" + ns, port: "5672", user: "user",
			password: ref("jobs-mq", "rabbitmq-password"),
			conn:     "amqp://user:$(PASSWORD)@jobs-mq" + ns + ":5672",
		}},
		{"rabbitmq/existing-secret", rendered("rabbitmq", "jobs-mq", m{"auth": m{"username": "worker", "existingPasswordSecret": "mq-creds", "existingSecretPasswordKey": "pw"}, "service": m{"ports": m{"amqp": 5673}}}), want{
			host: "jobs-mq" + ns, port: "5673", user: "worker",
			password: ref("mq-creds", "pw"),
			conn:     "amqp://worker:$(PASSWORD)@jobs-mq" + ns + ":5673",
		}},
		{"rabbitmq/existing-secret-default-key", rendered("rabbitmq", "jobs-mq", m{"auth": m{"existingPasswordSecret": "mq-creds"}}), want{
			host: "jobs-mq" + ns, port: "5672", user: "user",
			password: ref("mq-creds", "rabbitmq-password"),
			conn:     "amqp://user:$(PASSWORD)@jobs-mq" + ns + ":5672",
		}},
	}
}

// check compares resolved exports with a want and returns the differences.
func check(t *testing.T, in AddonInput, got map[string]Export, w want) {
	t.Helper()
	plain := func(key, value string) {
		t.Helper()
		if value == "" {
			return
		}
		e, ok := got[key]
		if !ok || e.Kind != Plain || e.Value != value || e.Sensitive {
			t.Errorf("%s = %+v, want plain %q", key, e, value)
		}
	}
	plain(KeyHost, w.host)
	plain(KeyPort, w.port)
	plain(KeyUsername, w.user)
	plain(KeyDatabase, w.db)
	if w.password != nil {
		e := got[KeyPassword]
		if e.Kind != Secret || !e.Sensitive || e.Value != "" {
			t.Errorf("password = %+v, want a sensitive secret export", e)
		}
		if diff := cmp.Diff(w.password, e.Secret); diff != "" {
			t.Errorf("password secret (-want +got):\n%s", diff)
		}
	}
	if w.conn != "" {
		e := got[KeyConnectionString]
		switch {
		case w.password != nil:
			want := Export{Key: KeyConnectionString, Kind: Composed, Sensitive: true, Template: w.conn,
				Parts: []Part{{Name: PasswordPart, Secret: w.password}}, Description: e.Description}
			if diff := cmp.Diff(want, e); diff != "" {
				t.Errorf("connection_string (-want +got):\n%s", diff)
			}
		case e.Kind != Plain || e.Value != w.conn:
			t.Errorf("connection_string = %+v, want plain %q", e, w.conn)
		}
	}
	keys, _ := Keys(in.Type)
	var wantKeys []string
	for _, k := range keys {
		if !slices.Contains(w.missing, k) {
			wantKeys = append(wantKeys, k)
		}
	}
	if diff := cmp.Diff(wantKeys, slices.Sorted(maps.Keys(got))); diff != "" {
		t.Errorf("export keys (-want +got):\n%s", diff)
	}
	for _, k := range w.missing {
		_, err := Lookup(in, k)
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("Lookup(%s) error = %v, want ErrUnavailable", k, err)
		}
	}
	for k, e := range got {
		if e.Key != k {
			t.Errorf("export under %q has Key %q", k, e.Key)
		}
		if e.Description == "" {
			t.Errorf("export %q has no description", k)
		}
	}
}

func TestForAddonCatalog(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, tc := range variants() {
		seen[tc.in.Type] = true
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ForAddon(tc.in)
			if err != nil {
				t.Fatalf("ForAddon: %v", err)
			}
			check(t, tc.in, got, tc.want)
		})
	}
	for _, typ := range Types() {
		if typ != Generic && !seen[typ] {
			t.Errorf("catalog type %s has no test variant", typ)
		}
	}
}

func TestForAddonErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   AddonInput
		want string
		is   error
	}{
		{"unknown type", AddonInput{Type: "cassandra", Release: "x", Namespace: "shop"}, `unknown addon type "cassandra"`, ErrUnknownType},
		{"empty release", AddonInput{Type: "redis", Namespace: "shop"}, "release name is empty", nil},
		{"bad namespace", AddonInput{Type: "redis", Release: "c", Namespace: "Shop"}, "not a DNS label", nil},
		{"declared on catalog type", AddonInput{Type: "redis", Release: "c", Namespace: "shop", Declared: []Declared{{Key: "x"}}}, "only generic addons declare exports", nil},
		{"map where string expected", rendered("postgresql", "db", m{"auth": m{"username": m{"a": 1}}}), "values auth.username: want a scalar", nil},
		{"port out of range", rendered("postgresql", "db", m{"primary": m{"service": m{"ports": m{"postgresql": 70000}}}}), "out of range", nil},
		{"port not a number", rendered("mysql", "db", m{"primary": m{"service": m{"ports": m{"mysql": "http"}}}}), "want an integer", nil},
		{"templated secret name", rendered("postgresql", "db", m{"auth": m{"existingSecret": "{{ .Release.Name }}-creds"}}), "template expressions are not supported", nil},
		{"invalid fullname", rendered("redis", "db", m{"fullnameOverride": "Cache_1"}), `Service name "Cache_1-master" is not a DNS label`, nil},
		{"service name too long", rendered("redis", strings.Repeat("a", 60), nil), "is not a DNS label", nil},
		{"empty existing key", rendered("postgresql", "db", m{"auth": m{"existingSecret": "s", "username": "u", "secretKeys": m{"userPasswordKey": ""}}}), `Secret key "" (from auth.secretKeys.userPasswordKey)`, nil},
		{"invalid secret name", rendered("mysql", "db", m{"auth": m{"existingSecret": "Not Valid"}}), `Secret name "Not Valid"`, nil},
		{"mongodb user list mismatch", rendered("mongodb", "db", m{"auth": m{"usernames": []any{"a"}}}), "same length", nil},
		{"mongodb usernames not a list", rendered("mongodb", "db", m{"auth": m{"usernames": "a"}}), "want a list", nil},
		{"mongodb zero replicas", rendered("mongodb", "db", m{"architecture": "replicaset", "replicaCount": 0}), "at least one member", nil},
		{"rabbitmq empty user", rendered("rabbitmq", "mq", m{"auth": m{"username": ""}}), "auth.username: must not be empty", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ForAddon(tc.in)
			if err == nil {
				t.Fatalf("ForAddon = %v, want error containing %q", got, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q, want it to contain %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error = %v, want errors.Is %v", err, tc.is)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	in := rendered("postgresql", "app-db", m{"auth": m{"enablePostgresUser": false}})
	tests := []struct {
		key  string
		is   error
		want string
	}{
		{KeyHost, nil, ""},
		{KeyPassword, ErrUnavailable, `postgresql export "password": the postgres user has no password`},
		{"url", ErrUnknownKey, `postgresql has no export "url" (valid: connection_string, database, host, password, port, username)`},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			t.Parallel()
			e, err := Lookup(in, tc.key)
			if tc.is == nil {
				if err != nil || e.Key != tc.key {
					t.Fatalf("Lookup = %+v, %v", e, err)
				}
				return
			}
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %v containing %q", err, tc.is, tc.want)
			}
		})
	}
}

func TestCatalogInfo(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff([]string{"generic", "mariadb", "mongodb", "mysql", "postgresql", "rabbitmq", "redis"}, Types()); diff != "" {
		t.Errorf("Types (-want +got):\n%s", diff)
	}
	tests := []struct {
		typ       string
		port      int
		portValue string
		keys      []string
	}{
		{"postgresql", 5432, "primary.service.ports.postgresql", []string{"connection_string", "database", "host", "password", "port", "username"}},
		{"mysql", 3306, "primary.service.ports.mysql", []string{"connection_string", "database", "host", "password", "port", "username"}},
		{"mariadb", 3306, "primary.service.ports.mysql", []string{"connection_string", "database", "host", "password", "port", "username"}},
		{"redis", 6379, "master.service.ports.redis", []string{"connection_string", "host", "password", "port"}},
		{"mongodb", 27017, "service.ports.mongodb", []string{"connection_string", "database", "host", "password", "port", "username"}},
		{"rabbitmq", 5672, "service.ports.amqp", []string{"connection_string", "host", "password", "port", "username"}},
	}
	for _, tc := range tests {
		t.Run(tc.typ, func(t *testing.T) {
			t.Parallel()
			c, ok := Info(tc.typ)
			if !ok {
				t.Fatal("Info: not found")
			}
			want := Chart{Type: tc.typ, Repository: BitnamiRepository, Keys: tc.keys, Port: tc.port, PortValue: tc.portValue}
			if diff := cmp.Diff(want, c); diff != "" {
				t.Errorf("Info (-want +got):\n%s", diff)
			}
			keys, ok := Keys(tc.typ)
			if !ok || !slices.IsSorted(keys) || !slices.Equal(keys, tc.keys) {
				t.Errorf("Keys = %v, %v", keys, ok)
			}
			keys[0] = "changed"
			if again, _ := Keys(tc.typ); again[0] == "changed" {
				t.Error("Keys returned the catalog's own slice")
			}
			// The default port is what ForAddon reports without values.
			got, err := ForAddon(rendered(tc.typ, "x", nil))
			if err != nil {
				t.Fatal(err)
			}
			if got[KeyPort].Value != strconv.Itoa(tc.port) {
				t.Errorf("default port = %q, want %d", got[KeyPort].Value, tc.port)
			}
		})
	}
	if keys, ok := Keys(Generic); !ok || keys != nil {
		t.Errorf("Keys(generic) = %v, %v; want none, true", keys, ok)
	}
	if _, ok := Keys("nope"); ok {
		t.Error("Keys(nope) found")
	}
	if _, ok := Info("nope"); ok {
		t.Error("Info(nope) found")
	}
}

func TestWithFullnameOverride(t *testing.T) {
	t.Parallel()
	user := m{"auth": m{"username": "a"}}
	got := WithFullnameOverride(user, "app-db")
	if diff := cmp.Diff(m{"auth": m{"username": "a"}, "fullnameOverride": "app-db"}, got); diff != "" {
		t.Errorf("defaulted (-want +got):\n%s", diff)
	}
	if _, changed := user["fullnameOverride"]; changed {
		t.Error("input map was modified")
	}
	kept := WithFullnameOverride(m{"fullnameOverride": ""}, "app-db")
	if kept["fullnameOverride"] != "" {
		t.Errorf("user's empty fullnameOverride replaced: %v", kept)
	}
	if got := WithFullnameOverride(nil, "x"); got["fullnameOverride"] != "x" {
		t.Errorf("nil values: %v", got)
	}
}

func TestForWorkload(t *testing.T) {
	t.Parallel()
	got := ForWorkload("my-api-api", "shop", 8000)
	want := map[string]Export{
		KeyHost:    {Key: KeyHost, Kind: Plain, Value: "my-api-api.shop.svc.cluster.local", Description: got[KeyHost].Description},
		KeyPort:    {Key: KeyPort, Kind: Plain, Value: "8000", Description: got[KeyPort].Description},
		KeyURL:     {Key: KeyURL, Kind: Plain, Value: "http://my-api-api.shop.svc.cluster.local:8000", Description: got[KeyURL].Description},
		KeyAddress: {Key: KeyAddress, Kind: Plain, Value: "my-api-api.shop.svc.cluster.local:8000", Description: got[KeyAddress].Description},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ForWorkload (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(WorkloadKeys(), slices.Sorted(maps.Keys(got))); diff != "" {
		t.Errorf("WorkloadKeys (-want +got):\n%s", diff)
	}
	noPort := ForWorkload("worker", "shop", 0)
	if diff := cmp.Diff([]string{KeyHost}, slices.Sorted(maps.Keys(noPort))); diff != "" {
		t.Errorf("without port (-want +got):\n%s", diff)
	}
}
