package secretscan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIsCredentialName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want bool
	}{
		{"DB_PASSWORD", true}, {"password", true}, {"rootPassword", true}, {"PASSWD", true}, {"GPG_PASSPHRASE", true},
		{"API_KEY", true}, {"apiKey", true}, {"STRIPE_API_KEY", true}, {"API_KEYS", true}, {"privateKey", true},
		{"secretKey", true}, {"AWS_SECRET_ACCESS_KEY", true}, {"awsSecretAccessKey", true}, {"ACCESS_KEY", true},
		{"AWS_ACCESS_KEY_ID", true}, {"SIGNING_KEY", true}, {"JWT_SECRET", true}, {"SECRET_KEY_BASE", true},
		{"GITHUB_TOKEN", true}, {"AUTH", true}, {"BASIC_AUTH", true}, {"proxyAuth", true}, {"pass", true},
		{"SMTP_PASS", true}, {"DB_PWD", true}, {"PWD_HASH", true}, {"clientSecret", true}, {"CREDENTIALS", true},

		{"existingSecret", false}, {"existingSecretKey", false}, {"existingSecretPasswordKey", false},
		{"passwordKey", false}, {"userKey", false}, {"tokenKey", false}, {"rootPasswordSecretKey", false},
		{"secretKeyRef", false}, {"secretName", false}, {"passwordSecretName", false}, {"PASSWORD_FILE", false},
		{"TOKEN_URL", false}, {"tokenUrl", false}, {"AUTH_TYPE", false}, {"AUTH_PROVIDER", false},
		{"OAUTH_CLIENT_ID", false}, {"AUTHOR", false}, {"PWD", false}, {"bypass", false}, {"passthrough", false},
		{"MYSQL_ROOT_PASSWORD_FILE", false}, {"POSTGRES_PASSWORD_FILE", false}, {"GF_SECURITY_ADMIN_PASSWORD__FILE", false},
		{"passwordFile", false}, {"PASSWORDFILE", false}, {"tokenpath", false}, {"SECRETS_DIR", false}, {"API_KEY_FILE", false},
		{"DB_PASSWORD_FILES", false}, {"JWT_SECRET_PATH", false},
		{"SECRET_PROFILE", true}, {"PASSWORD_FILE_CONTENT", true}, {"FILE_PASSWORD", true},
		{"LOG_LEVEL", false}, {"TLS_KEY", false}, {"USERNAME", false}, {"", false}, {"password-stdin", false},
	}
	for _, tt := range tests {
		if got := IsCredentialName(tt.name); got != tt.want {
			t.Errorf("IsCredentialName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"existingSecretKey": {"existing", "secret", "key"},
		"DB_PASSWORD":       {"db", "password"},
		"APIKey":            {"api", "key"},
		"tls.key":           {"tls", "key"},
		"s3AccessKey":       {"s3", "access", "key"},
		"--db-password":     {"db", "password"},
	} {
		if d := cmp.Diff(want, Words(in)); d != "" {
			t.Errorf("Words(%q) (-want +got):\n%s", in, d)
		}
	}
}

func TestIsReference(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{
		"$(DB_PASSWORD)": true, "${DB_PASSWORD}": true, "$DB_PASSWORD": true, "${X:-default}": true, "$(A)$(B)": true,
		"hunter2": false, "$(A)x": false, "$": false, "": false, "pa$$word": false,
	} {
		if got := IsReference(v); got != want {
			t.Errorf("IsReference(%q) = %v, want %v", v, got, want)
		}
	}
}
