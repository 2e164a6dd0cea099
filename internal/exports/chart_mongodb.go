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
	svc, replicaset, err := mongodbService(v, full)
	if err != nil {
		return nil, err
	}
	port, err := v.port("service.ports.mongodb", 27017)
	if err != nil {
		return nil, err
	}
	ns, err := c.namespaceOf("global.namespaceOverride")
	if err != nil {
		return nil, err
	}
	what := "MongoDB"
	if replicaset {
		what = "MongoDB replica set headless"
	}
	host, err := c.service(r, svc, ns, port, what)
	if err != nil {
		return nil, err
	}
	conn := connURL{scheme: "mongodb", hosts: []string{host + ":" + strconv.Itoa(port)}}
	if replicaset {
		if conn.hosts, conn.query, err = mongodbMembers(v, full, host, port); err != nil {
			return nil, err
		}
	}
	users, dbs, err := mongodbCustomUsers(v)
	if err != nil {
		return nil, err
	}
	if v.truthy("tls.enabled", false) {
		conn.query = append(conn.query, queryPair("tls", "true"))
	}
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
		if err := mongodbCredentials(r, v, full, users, dbs, &conn); err != nil {
			return nil, err
		}
	}
	r.add(conn.export("MongoDB connection URI"))
	return r, nil
}

// mongodbService returns the name of the Service of bitnami/mongodb,
// "mongodb.service.nameOverride", and whether the architecture is a
// replica set.
func mongodbService(v values, full string) (name string, replicaset bool, err error) {
	arch, err := v.str("architecture", "standalone")
	if err != nil {
		return "", false, err
	}
	replicaset = arch == "replicaset"
	name = full
	if replicaset {
		name = full + "-headless"
	}
	if name, err = v.firstStr(name, "service.nameOverride"); err != nil {
		return "", false, err
	}
	return name, replicaset, nil
}

// mongodbMembers returns the hosts of the members of a replica set behind
// the headless Service host, as templates/NOTES.txt lists them, and the
// query that names the replica set.
func mongodbMembers(v values, full, host string, port int) (hosts, query []string, err error) {
	n, err := v.count("replicaCount", 2)
	if err != nil {
		return nil, nil, err
	}
	if n == 0 {
		return nil, nil, fmt.Errorf("values replicaCount: a replica set needs at least one member")
	}
	rs, err := v.str("replicaSetName", "rs0")
	if err != nil {
		return nil, nil, err
	}
	p := strconv.Itoa(port)
	for i := range n {
		hosts = append(hosts, full+"-"+strconv.Itoa(i)+"."+host+":"+p)
	}
	return hosts, []string{queryPair("replicaSet", rs)}, nil
}

// mongodbCustomUsers returns the custom users and their databases,
// "mongodb.customUsers" and "mongodb.customDatabases", which the chart
// requires to be as many.
func mongodbCustomUsers(v values) (users, dbs []string, err error) {
	if users, err = customList(v, "auth.username", "auth.usernames"); err != nil {
		return nil, nil, err
	}
	if dbs, err = customList(v, "auth.database", "auth.databases"); err != nil {
		return nil, nil, err
	}
	if len(users) != len(dbs) {
		return nil, nil, fmt.Errorf("values auth.usernames and auth.databases must have the same length (the chart refuses them otherwise)")
	}
	return users, dbs, nil
}

// mongodbCredentials adds the user, the password and, for a custom user,
// the database of a MongoDB with auth and at most one custom user, and
// puts them in conn: the custom user when there is one, else the root user,
// who authenticates against the admin database.
func mongodbCredentials(r *result, v values, full string, users, dbs []string, conn *connURL) error {
	name, _, err := secretName(v, full, "auth.existingSecret")
	if err != nil {
		return err
	}
	user, key, desc := "", "", ""
	if len(users) == 1 {
		user, key, desc = users[0], "mongodb-passwords", "password of the MongoDB custom user"
		conn.path = dbs[0]
		r.add(Export{Key: KeyDatabase, Kind: Plain, Value: dbs[0], Description: "MongoDB database of the custom user"})
	} else {
		if user, err = v.str("auth.rootUser", "root"); err != nil {
			return err
		}
		key, desc = "mongodb-root-password", "password of the MongoDB root user"
		conn.query = append(conn.query, queryPair("authSource", "admin"))
		r.missing(KeyDatabase, "no custom database: set auth.usernames and auth.databases")
	}
	ref, err := secretRef(name, key, "the chart's key names")
	if err != nil {
		return err
	}
	conn.user, conn.password = user, ref
	r.add(Export{Key: KeyUsername, Kind: Plain, Value: user, Description: "MongoDB user"})
	r.add(passwordExport(ref, desc))
	return nil
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
	svc, replicaset, err := mongodbService(c.v, full)
	if err != nil {
		return "", err
	}
	add(svc)
	if replicaset && c.v.truthy("arbiter.enabled", true) {
		add(full + "-arbiter-headless")
	}
	if c.v.truthy("metrics.enabled", false) {
		add(full + "-metrics")
	}
	return c.v.firstStr("", "global.namespaceOverride")
}
