// Package secretscan holds the rules that tell a credential written in plain
// text from a harmless value, shared by the two gates that keep credentials
// out of Git: render validate (package spec, on the specs) and verify (on the
// fleet).
//
// Three kinds of rule:
//
//   - Names. IsCredentialName says whether the name of an env var, a Helm
//     value, a ConfigMap key or a command-line flag says it holds a
//     credential (DB_PASSWORD, apiKey, AUTH, pass), as opposed to naming
//     where one is (existingSecret, passwordKey, PASSWORD_FILE, secretName).
//   - Values. Find locates credentials by their shape, whatever their name:
//     provider tokens with fixed prefixes (GitHub, GitLab, Slack, AWS, Stripe,
//     Google), JWTs, PEM private keys (also base64-encoded), passwords in
//     URLs (scheme://user:password@host), and the credential of an
//     Authorization header written out (Bearer …, Basic …).
//   - Command lines. Flags finds credentials passed as flags:
//     --password=…, --token …, and mysql's -p….
//
// A match never carries the credential's text, only where it is and what
// kind it is (Match.What), so that no message built from it can leak the
// value. References that the cluster resolves, $(VAR) and ${VAR}, are never
// credentials (IsReference).
package secretscan
