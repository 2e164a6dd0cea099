package exports

import "strconv"

// postgresqlEntry is bitnami/postgresql.
func postgresqlEntry() entry {
	return entry{Chart{"postgresql", BitnamiRepository, sqlKeys(), 5432, "primary.service.ports.postgresql"}, resolvePostgreSQL, postgresqlServices}
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
	svc, err := primaryService(v, full)
	if err != nil {
		return nil, err
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
	secret, existing, err := secretName(v, full, "global.postgresql.auth.existingSecret", "auth.existingSecret")
	if err != nil {
		return nil, err
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
			if password, err = secretRef(secret, adminKey, adminFrom); err != nil {
				return nil, err
			}
		} else {
			r.missing(KeyPassword, "the postgres user has no password: auth.enablePostgresUser is false and no auth.username is set")
		}
	} else if password, err = secretRef(secret, userKey, userFrom); err != nil {
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

// postgresqlServices adds the Services of bitnami/postgresql:
// templates/_helpers.tpl "postgresql.v1.primary.fullname",
// "postgresql.v1.primary.svc.headless" (<primary>-hl),
// "postgresql.v1.readReplica.fullname"; primary/svc.yaml,
// primary/svc-headless.yaml, read/svc.yaml, read/svc-headless.yaml,
// primary/metrics-svc.yaml (<primary>-metrics).
func postgresqlServices(c *chartContext, full string, add func(...string)) (namespace string, err error) {
	a, err := c.v.str("architecture", "standalone")
	if err != nil {
		return "", err
	}
	primary, err := primaryService(c.v, full)
	if err != nil {
		return "", err
	}
	if a == "replication" {
		read, err := c.v.str("readReplicas.name", "read")
		if err != nil {
			return "", err
		}
		readFull := trunc63(full + "-" + read)
		add(readFull, trunc63(readFull)+"-hl")
	}
	add(primary, primary+"-hl")
	if c.v.truthy("metrics.enabled", false) {
		add(primary + "-metrics")
	}
	return "", nil
}
