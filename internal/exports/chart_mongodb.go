package exports

import (
	"fmt"
	"strconv"
)

// mongodbEntry is bitnami/mongodb.
func mongodbEntry() entry {
	return entry{Chart{"mongodb", BitnamiRepository, sqlKeys(), 27017, "service.ports.mongodb"}, resolveMongoDB, mongodbServices}
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

// mongodbServices adds the Services of bitnami/mongodb, and returns the
// namespace of global.namespaceOverride when set:
// "mongodb.service.nameOverride" (standalone/svc.yaml,
// replicaset/headless-svc.yaml), arbiter/headless-svc.yaml
// (<fullname>-arbiter-headless, arbiter.enabled by default),
// metrics-svc.yaml (<fullname>-metrics).
func mongodbServices(c *chartContext, full string, add func(...string)) (namespace string, err error) {
	a, err := c.v.str("architecture", "standalone")
	if err != nil {
		return "", err
	}
	svc := full
	if a == "replicaset" {
		svc = full + "-headless"
	}
	if svc, err = c.v.firstStr(svc, "service.nameOverride"); err != nil {
		return "", err
	}
	add(svc)
	if a == "replicaset" && c.v.truthy("arbiter.enabled", true) {
		add(full + "-arbiter-headless")
	}
	if c.v.truthy("metrics.enabled", false) {
		add(full + "-metrics")
	}
	return c.v.firstStr("", "global.namespaceOverride")
}
