package secretscan

import (
	"regexp"
	"strings"
)

// credentialParts are the words that, found anywhere in a name lowercased
// with its separators removed, say it holds a credential.
var credentialParts = []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey", "privatekey", "credential", "authkey", "signingkey"}

// namingParts are the words that, before a key word, say a name names a
// key of a Secret: rootPasswordSecretKey, tokenKey.
var namingParts = []string{"password", "passwd", "pass", "pwd", "token", "secret", "credential"}

// containsAny reports whether s contains one of parts. Names are read by
// the ten thousand in a repository: this is several times faster than the
// same alternation as a regular expression.
func containsAny(s string, parts []string) bool {
	for _, p := range parts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// lastCredentialWords are words that mark a credential only as a name's
// last word: AUTH and BASIC_AUTH hold one, AUTH_PROVIDER does not.
var lastCredentialWords = map[string]bool{"pass": true, "pwd": true, "auth": true, "authorization": true}

// locatorWords end names that say where a credential is, or something
// about it, rather than hold it: PASSWORD_FILE, secretName, TOKEN_URL,
// passwordSecretRef, AUTH_TYPE.
var locatorWords = map[string]bool{
	"name": true, "names": true, "ref": true, "refs": true, "file": true, "files": true, "path": true, "paths": true,
	"dir": true, "url": true, "uri": true, "endpoint": true, "enabled": true, "length": true, "ttl": true,
	"type": true, "mode": true, "stdin": true,
}

// locatorSuffix reports whether a word is a credential word run together
// with a locator word: PASSWORDFILE, tokenpath.
func locatorSuffix(word string) bool {
	for _, suffix := range []string{"file", "files", "path", "dir"} {
		if before, ok := strings.CutSuffix(word, suffix); ok && before != "" && containsAny(before, credentialParts) {
			return true
		}
	}
	return false
}

// valueKeys are the endings of names that hold a key itself (an API key, a
// private key) rather than name a key of a Secret (passwordKey, userKey),
// longest first.
var valueKeys = []string{
	"secretaccesskey", "encryptionkey", "privatekey", "signingkey", "sessionkey", "licensekey", "accesskey",
	"secretkey", "masterkey", "clientkey", "sharedkey", "apikey", "authkey", "hmackey",
}

// IsCredentialName reports whether a name (an env var, a Helm value's key,
// a ConfigMap key, a flag) says that its value is a credential:
// DB_PASSWORD, API_KEY, apiKey, privateKey, secretKey, AUTH, pass,
// CLIENT_SECRET. Names that say where a credential is are not: existing…
// (existingSecret, existingSecretKey), …Key naming a key of a Secret
// (passwordKey, userKey), and names ending in Name, Ref, File, Path, URL and
// the like (PASSWORD_FILE, secretName, tokenUrl).
func IsCredentialName(name string) bool {
	words := Words(name)
	if len(words) == 0 {
		return false
	}
	norm := strings.Join(words, "")
	last := words[len(words)-1]
	switch {
	case strings.HasPrefix(norm, "existing"), locatorWords[last], locatorSuffix(last),
		strings.HasSuffix(norm, "name"), strings.HasSuffix(norm, "ref"), strings.HasSuffix(norm, "refs"):
		return false
	case strings.HasSuffix(norm, "key"), strings.HasSuffix(norm, "keys"):
		t := strings.TrimSuffix(norm, "s")
		for _, suffix := range valueKeys {
			if before, ok := strings.CutSuffix(t, suffix); ok {
				return !containsAny(before, namingParts)
			}
		}
		return false
	case lastCredentialWords[last] && (last != "pwd" || len(words) > 1), words[0] == "pwd" && len(words) > 1:
		return true
	}
	return containsAny(norm, credentialParts)
}

// Words splits a name into its lowercase words at separators and at
// camelCase boundaries: "existingSecretKey" is existing, secret, key;
// "DB_PASSWORD" db, password; "APIKey" api, key.
func Words(name string) []string {
	var out []string
	var w []byte
	flush := func() {
		if len(w) > 0 {
			out = append(out, strings.ToLower(string(w)))
			w = w[:0]
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case isLower(c) || isDigit(c):
			w = append(w, c)
		case isUpper(c):
			// a new word starts at an upper-case letter after a lower-case one
			// or a digit, and at the last capital of a run before lower case
			if i > 0 && (isLower(name[i-1]) || isDigit(name[i-1]) ||
				isUpper(name[i-1]) && i+1 < len(name) && isLower(name[i+1])) {
				flush()
			}
			w = append(w, c)
		default:
			flush()
		}
	}
	flush()
	return out
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// references are values the cluster or a shell resolves: $(VAR) (Kubernetes
// env expansion), ${VAR} and $VAR.
var references = regexp.MustCompile(`^(\$\([A-Za-z_][A-Za-z0-9_]*\)|\$\{[A-Za-z_][A-Za-z0-9_]*(:?[-=][^}]*)?\}|\$[A-Za-z_][A-Za-z0-9_]*)+$`)

// IsReference reports whether v consists only of references to variables
// ($(VAR), ${VAR}, $VAR), which hold no credential themselves.
func IsReference(v string) bool { return references.MatchString(v) }

// IsEncrypted reports whether v is a value SOPS encrypted: ENC[…].
func IsEncrypted(v string) bool { return strings.HasPrefix(v, "ENC[") && strings.HasSuffix(v, "]") }
