package exports

import (
	"net/url"
	"strings"
)

// PasswordPart is the Name of the part of a composed connection string that
// holds the password.
const PasswordPart = "PASSWORD"

// connURL describes a connection URL such as
// postgresql://user:password@host:5432/db. Literal pieces are escaped for the
// URL; the password, which lives in a Secret, is a part.
type connURL struct {
	scheme   string
	user     string // empty: no user info
	password *SecretKeyRef
	hosts    []string // host:port
	path     string   // database, unescaped; empty: none
	query    []string // key=value, already escaped
}

// export returns the connection string as a Composed export when it holds a
// password and as a Plain one otherwise.
func (u connURL) export(desc string) Export {
	var lit strings.Builder // the literal text before the password
	lit.WriteString(u.scheme + "://")
	if u.user != "" {
		lit.WriteString(url.User(u.user).String())
	}
	var rest strings.Builder // the literal text after the password
	if u.user != "" || u.password != nil {
		rest.WriteString("@")
	}
	rest.WriteString(strings.Join(u.hosts, ","))
	if u.path != "" || len(u.query) > 0 {
		rest.WriteString("/")
	}
	if u.path != "" {
		rest.WriteString(url.PathEscape(u.path))
	}
	if len(u.query) > 0 {
		rest.WriteString("?" + strings.Join(u.query, "&"))
	}
	if u.password == nil {
		return Export{Key: KeyConnectionString, Kind: Plain, Value: lit.String() + rest.String(), Description: desc}
	}
	ref := *u.password
	return Export{
		Key:         KeyConnectionString,
		Kind:        Composed,
		Sensitive:   true,
		Parts:       []Part{{Name: PasswordPart, Secret: &ref}},
		Template:    escapeDollar(lit.String()) + ":$(" + PasswordPart + ")" + escapeDollar(rest.String()),
		Description: desc,
	}
}

// queryPair returns key=value escaped for a URL query.
func queryPair(key, value string) string {
	return url.QueryEscape(key) + "=" + url.QueryEscape(value)
}
