package exports

import "strconv"

// mysqlEntry is bitnami/mysql.
func mysqlEntry() entry {
	return entry{Chart{"mysql", BitnamiRepository, sqlKeys(), 3306, "primary.service.ports.mysql"}, resolveMySQL, mysqlServices}
}

// mariadbEntry is bitnami/mariadb, a chart of the same shape as mysql's.
func mariadbEntry() entry {
	return entry{Chart{"mariadb", BitnamiRepository, sqlKeys(), 3306, "primary.service.ports.mysql"}, resolveMariaDB, mysqlServices}
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
	svc, err := primaryService(v, full)
	if err != nil {
		return nil, err
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
	secret, existing, err := secretName(v, full, "auth.existingSecret")
	if err != nil {
		return nil, err
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
		if password, err = secretRef(secret, key, "the chart's key names"); err != nil {
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

// mysqlServices adds the Services of bitnami/mysql and bitnami/mariadb:
// templates/_helpers.tpl "<chart>.primary.fullname",
// "<chart>.secondary.fullname"; primary/svc.yaml,
// primary/svc-headless.yaml (<primary>-headless), the same for
// secondary/, metrics-svc.yaml (<fullname>-metrics).
func mysqlServices(c *chartContext, full string, add func(...string)) (namespace string, err error) {
	a, err := c.v.str("architecture", "standalone")
	if err != nil {
		return "", err
	}
	primary, err := primaryService(c.v, full)
	if err != nil {
		return "", err
	}
	if a == "replication" {
		sec, err := c.v.str("secondary.name", "secondary")
		if err != nil {
			return "", err
		}
		secondary := trunc63(full + "-" + sec)
		add(secondary, secondary+"-headless")
	}
	add(primary, primary+"-headless")
	if c.v.truthy("metrics.enabled", false) {
		add(full + "-metrics")
	}
	return "", nil
}
