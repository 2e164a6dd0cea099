package secretscan

import (
	"path"
	"strings"
)

// FlagMatch is a credential passed on a command line.
type FlagMatch struct {
	// Arg is the index of the word (of command and args together) that
	// holds the value.
	Arg int
	// Flag is the flag, such as --password; "-p" for mysql's -p<password>.
	Flag string
}

// mysqlClients take the password glued to -p (-psecret).
var mysqlClients = map[string]bool{
	"mysql": true, "mysqldump": true, "mysqladmin": true, "mysqlimport": true, "mysqlshow": true, "mysqlcheck": true,
	"mysqlpump": true, "mariadb": true, "mariadb-dump": true, "mariadb-admin": true,
}

// switchWords start flags that take no credential though their name says
// one: --no-password, --ask-password, --use-token.
var switchWords = map[string]bool{
	"no": true, "ask": true, "prompt": true, "require": true, "use": true, "with": true, "without": true,
	"skip": true, "disable": true, "enable": true, "allow": true,
}

// Flags returns the credentials a command line passes as flags with a
// literal value: --password=…, --db-password … and -token … (the value in
// the next word), --token=…, and, when the command line runs a MySQL client,
// -p<password>. Words holding a shell script (sh -c "…") are split at
// white space and searched too. References ($(VAR), ${VAR}, $VAR) are not
// credentials.
func Flags(words []string) []FlagMatch {
	type word struct {
		s   string
		arg int
	}
	var ws []word
	mysql := false
	for i, w := range words {
		parts := strings.Fields(w)
		if len(parts) > 1 || len(parts) == 1 && parts[0] != w {
			for _, p := range parts {
				ws = append(ws, word{p, i})
			}
		} else {
			ws = append(ws, word{w, i})
		}
		for _, p := range parts {
			if mysqlClients[path.Base(p)] {
				mysql = true
			}
		}
	}
	var out []FlagMatch
	for i, w := range ws {
		s := strings.Trim(w.s, `"'`)
		if !strings.HasPrefix(s, "-") || s == "-" || s == "--" {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(s, "-"), "=")
		if mysql && !strings.HasPrefix(s, "--") && strings.HasPrefix(s, "-p") && len(s) > 2 && !hasValue {
			if v := s[2:]; !IsReference(v) {
				out = append(out, FlagMatch{Arg: w.arg, Flag: "-p"})
			}
			continue
		}
		if !IsCredentialName(name) {
			continue
		}
		if parts := Words(name); len(parts) > 1 && switchWords[parts[0]] {
			continue
		}
		flag := s[:len(s)-len(strings.TrimLeft(s, "-"))] + name
		switch {
		case hasValue:
			if value = strings.Trim(value, `"'`); value != "" && !IsReference(value) && !IsEncrypted(value) {
				out = append(out, FlagMatch{Arg: w.arg, Flag: flag})
			}
		case len(name) > 1 && i+1 < len(ws):
			next := strings.Trim(ws[i+1].s, `"'`)
			if next != "" && !strings.HasPrefix(next, "-") && !IsReference(next) && !IsEncrypted(next) {
				out = append(out, FlagMatch{Arg: ws[i+1].arg, Flag: flag})
			}
		}
	}
	return out
}
