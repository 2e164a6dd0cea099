package exports

import "strconv"

// redisEntry is bitnami/redis.
func redisEntry() entry {
	return entry{Chart{"redis", BitnamiRepository, []string{KeyConnectionString, KeyHost, KeyPassword, KeyPort}, 6379, "master.service.ports.redis"}, resolveRedis, redisServices}
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

// redisServices adds the Services of bitnami/redis:
// master/service.yaml (<fullname>-master), replicas/service.yaml
// (<fullname>-replicas, architecture replication, the default),
// headless-svc.yaml (<fullname>-headless), sentinel/service.yaml
// (<fullname>, in place of master and replicas), metrics/svc.yaml.
func redisServices(c *chartContext, full string, add func(...string)) (namespace string, err error) {
	a, err := c.v.str("architecture", "replication")
	if err != nil {
		return "", err
	}
	switch {
	case c.v.truthy("sentinel.enabled", false):
		add(full)
	case a == "replication":
		add(full+"-master", full+"-replicas")
	default:
		add(full + "-master")
	}
	add(full + "-headless")
	if c.v.truthy("metrics.enabled", false) {
		add(full + "-metrics")
	}
	return "", nil
}
