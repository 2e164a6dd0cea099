package exports

import (
	"fmt"
	"strconv"
)

// rabbitmqEntry is bitnami/rabbitmq.
func rabbitmqEntry() entry {
	return entry{Chart{"rabbitmq", BitnamiRepository, []string{KeyConnectionString, KeyHost, KeyPassword, KeyPort, KeyUsername}, 5672, "service.ports.amqp"}, resolveRabbitMQ, rabbitmqServices}
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

// rabbitmqServices adds the Services of bitnami/rabbitmq:
// svc.yaml (<fullname>), svc-headless.yaml (<fullname>-headless).
func rabbitmqServices(c *chartContext, full string, add func(...string)) (namespace string, err error) {
	add(full, full+"-headless")
	return "", nil
}
