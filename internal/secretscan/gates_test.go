package secretscan_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/spec/validate"
	"github.com/fleetwright/fleetwright/internal/verify"
)

// Fake credentials of real formats, well-formed but never issued.
var (
	githubToken  = "ghp_" + strings.Repeat("aB3d", 9)
	githubOAuth  = "gho_" + strings.Repeat("Zx9Y", 9)
	githubPAT    = "github_pat_11ABCDEFG0" + strings.Repeat("a1B2c3", 4) + "_" + strings.Repeat("Qw3r", 14) + "xyz"
	gitlabToken  = "glpat-Ab1Cd2Ef3Gh4Ij5Kl6Mn"
	awsKeyID     = "AKIAIOSFODNN7EXAMPLE"
	slackBot     = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	slackUser    = "xoxp-123456789012-1234567890123-1234567890123-0123456789abcdef0123456789abcdef"
	slackWebhook = "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
	stripeLive   = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
	googleKey    = "AIzaSyA-1234567890abcdefghijklmnopqrstu"
	jwt          = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pemKey       = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oN9Sx1yWnqhWoAoGCCqGSM49\n-----END EC PRIVATE KEY-----\n"
	pemBase64    = base64.StdEncoding.EncodeToString([]byte("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n"))
)

// A gateCase is one literal run through both gates: render validate on an
// app spec, and verify on the fleet object render would write. fleet, when
// set, is a fleet document checked by verify alone.
type gateCase struct {
	name    string
	env     [2]string // name, value
	command []string
	args    []string
	values  string // Helm values, one line of YAML
	host    string
	fleet   string
	// at is where the refusal is: a field under the workload (env[0].value,
	// args[1]), the addon's values (auth.apiKey) or the fleet document's
	// line; "" when the literal is allowed.
	at     string
	line   int    // the line of the refusal in fleet
	secret string // what no message may show; the env value by default
}

func gateCases() []gateCase {
	return []gateCase{
		// Env vars: by name, by shape, and what is allowed.
		{name: "env password", env: [2]string{"DB_PASSWORD", "hunter2"}, at: "env[0].value"},
		{name: "env AUTH", env: [2]string{"AUTH", "Basic dXNlcjpwYXNzd29yZA=="}, at: "env[0].value"},
		{name: "env BASIC_AUTH", env: [2]string{"BASIC_AUTH", "admin:hunter2"}, at: "env[0].value"},
		{name: "env client secret", env: [2]string{"OIDC_CLIENT_SECRET", "s3cr3t-value"}, at: "env[0].value"},
		{name: "env AWS key id by name", env: [2]string{"AWS_ACCESS_KEY_ID", awsKeyID}, at: "env[0].value"},
		{name: "env URL password", env: [2]string{"DATABASE_URL", "postgres://app:hunter2secret@db/app"}, at: "env[0].value", secret: "hunter2secret"},
		{name: "env redis URL password", env: [2]string{"CACHE", "redis://:s3cretpass@cache:6379/0"}, at: "env[0].value", secret: "s3cretpass"},
		{name: "env GitHub token", env: [2]string{"CONFIG", githubToken}, at: "env[0].value"},
		{name: "env GitHub OAuth token", env: [2]string{"CONFIG", githubOAuth}, at: "env[0].value"},
		{name: "env GitHub fine-grained token", env: [2]string{"CONFIG", githubPAT}, at: "env[0].value"},
		{name: "env GitLab token", env: [2]string{"GITLAB", gitlabToken}, at: "env[0].value"},
		{name: "env AWS key id by shape", env: [2]string{"AWS_ID", awsKeyID}, at: "env[0].value"},
		{name: "env Slack bot token", env: [2]string{"SLACK", slackBot}, at: "env[0].value"},
		{name: "env Slack user token", env: [2]string{"SLACK", slackUser}, at: "env[0].value"},
		{name: "env Slack webhook", env: [2]string{"SLACK_HOOK", slackWebhook}, at: "env[0].value", secret: strings.TrimPrefix(slackWebhook, "https://")},
		{name: "env Stripe live key", env: [2]string{"STRIPE", stripeLive}, at: "env[0].value"},
		{name: "env Google API key", env: [2]string{"MAPS", googleKey}, at: "env[0].value"},
		{name: "env JWT", env: [2]string{"SESSION", jwt}, at: "env[0].value"},
		{name: "env PEM key", env: [2]string{"TLS", pemKey}, at: "env[0].value", secret: "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oN9Sx1yWnqhWoAoGCCqGSM49"},
		{name: "env password file is fine", env: [2]string{"PASSWORD_FILE", "/run/secrets/x"}},
		{name: "env MySQL root password file is fine", env: [2]string{"MYSQL_ROOT_PASSWORD_FILE", "/run/secrets/x"}},
		{name: "env Grafana __FILE is fine", env: [2]string{"GF_SECURITY_ADMIN_PASSWORD__FILE", "/run/secrets/admin"}},
		{name: "env token file run together is fine", env: [2]string{"TOKENFILE", "/var/run/token"}},
		{name: "env password named as a file's content", env: [2]string{"PASSWORD_FILE_CONTENT", "hunter2"}, at: "env[0].value"},
		{name: "env reference is fine", env: [2]string{"DB_PASSWORD", "$(PG_PASSWORD)"}},
		{name: "env URL with referenced password is fine", env: [2]string{"DATABASE_URL", "postgres://app:$(DB_PASSWORD)@db/app"}},
		{name: "env plain URL is fine", env: [2]string{"HOMEPAGE", "https://example.com/path"}},
		{name: "env URL with user only is fine", env: [2]string{"REPO", "https://git@example.com/org/repo"}},
		{name: "env URL with a port is fine", env: [2]string{"UPSTREAM", "http://backend:8080/x"}},
		{name: "env log level is fine", env: [2]string{"LOG_LEVEL", "debug"}},
		{name: "env token URL is fine", env: [2]string{"TOKEN_URL", "https://auth.example.com/token"}},
		{name: "env auth type is fine", env: [2]string{"AUTH_TYPE", "basic"}},
		{name: "env secret name is fine", env: [2]string{"SECRET_NAME", "db-credentials"}},
		{name: "env PWD is fine", env: [2]string{"PWD", "/app"}},
		{name: "env test Stripe key is fine", env: [2]string{"STRIPE", "pk_live_4eC39HqLyjWDarjtT1zdp7dc"}},

		// Command lines.
		{name: "args --password=", args: []string{"--password=hunter2"}, at: "args[0]", secret: "hunter2"},
		{name: "args --token value", args: []string{"--token", "abc123def"}, at: "args[1]", secret: "abc123def"},
		{name: "args --api-key=", args: []string{"serve", "--api-key=k3y-v4lue"}, at: "args[1]", secret: "k3y-v4lue"},
		{name: "args mysql -p", command: []string{"mysql"}, args: []string{"-uroot", "-phunter2", "app"}, at: "args[1]", secret: "hunter2"},
		{name: "args shell script", command: []string{"sh", "-c"}, args: []string{"exec app --db-password=hunter2 --port 80"}, at: "args[0]", secret: "hunter2"},
		{name: "args token by shape", args: []string{"--header", "Authorization: token " + githubToken}, at: "args[1]", secret: githubToken},
		{name: "args bearer token", command: []string{"curl"}, args: []string{"-H", "Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "https://api.example.com"},
			at: "args[1]", secret: "9f8e7d6c5b4a39281706f5e4d3c2b1a0"},
		{name: "args referenced bearer token is fine", command: []string{"sh", "-c"}, args: []string{`curl -H "Authorization: Bearer $API_TOKEN" https://api.example.com`}},
		{name: "args referenced password is fine", args: []string{"--db-password=$(DB_PASSWORD)"}},
		{name: "args password file is fine", args: []string{"--password-file=/run/secrets/db"}},
		{name: "args -p without mysql is fine", args: []string{"-p8080"}},
		{name: "args --no-password is fine", command: []string{"pg_dump"}, args: []string{"--no-password", "mydb"}},
		{name: "args --listen is fine", args: []string{"--listen=:8080", "--token-ttl=1h"}},

		// Helm values.
		{name: "values apiKey", values: `{auth: {apiKey: abc123}}`, at: "auth.apiKey", secret: "abc123"},
		{name: "values privateKey", values: `{signing: {privateKey: "k3yMaterial"}}`, at: "signing.privateKey", secret: "k3yMaterial"},
		{name: "values secretKey", values: `{minio: {secretKey: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY}}`, at: "minio.secretKey", secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		{name: "values pass", values: `{smtp: {pass: hunter2}}`, at: "smtp.pass", secret: "hunter2"},
		{name: "values password", values: `{auth: {rootPassword: hunter2}}`, at: "auth.rootPassword", secret: "hunter2"},
		{name: "values extraEnv", values: `{extraEnv: [{name: API_KEY, value: abc123}]}`, at: "extraEnv[0].value", secret: "abc123"},
		{name: "values URL password", values: `{externalDatabase: {url: "postgres://u:hunter2secret@db/app"}}`, at: "externalDatabase.url", secret: "hunter2secret"},
		{name: "values PEM key", values: `{tls: {key: "` + strings.ReplaceAll(pemKey, "\n", `\n`) + `"}}`, at: "tls.key", secret: "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oN9Sx1yWnqhWoAoGCCqGSM49"},
		{name: "values extraArgs flag", values: `{extraArgs: ["--token=abc123def"]}`, at: "extraArgs[0]", secret: "abc123def"},
		{name: "values existingSecretKey is fine", values: `{auth: {existingSecret: db-creds, existingSecretKey: password}}`},
		{name: "values passwordKey is fine", values: `{auth: {passwordKey: password, userKey: username}}`},
		{name: "values secretName is fine", values: `{tls: {secretName: tls-cert}}`},
		{name: "values extraEnv plain is fine", values: `{extraEnv: [{name: LOG_LEVEL, value: debug}]}`},
		{name: "values password file is fine", values: `{auth: {passwordFile: /run/secrets/pw}}`},

		// Ingress hosts.
		{name: "host metadata IP", host: "169.254.169.254", at: "ingress.host"},
		{name: "host IPv4", host: "10.0.0.1", at: "ingress.host"},
		{name: "host IPv6", host: "fd00::1", at: "ingress.host"},
		{name: "host localhost", host: "localhost", at: "ingress.host"},
		{name: "host single label", host: "admin", at: "ingress.host"},
		{name: "host kubernetes.default", host: "kubernetes.default", at: "ingress.host"},
		{name: "host svc", host: "kubernetes.default.svc", at: "ingress.host"},
		{name: "host svc.cluster.local", host: "db.shop.svc.cluster.local", at: "ingress.host"},
		{name: "host metadata.google.internal", host: "metadata.google.internal", at: "ingress.host"},
		{name: "host .local", host: "printer.local", at: "ingress.host"},
		{name: "host localhost.*", host: "localhost.example.com", at: "ingress.host"},
		{name: "host wildcard internal", host: "*.cluster.local", at: "ingress.host"},
		{name: "host public is fine", host: "app.example.com"},
		{name: "host wildcard is fine", host: "*.apps.example.com"},

		// The fleet alone: Secrets, ConfigMaps, escapes, Lists.
		{
			name:  "Secret plain beside a dummy sops key",
			fleet: "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: shop\nstringData:\n  password: hunter2\nsops:\n  version: 3.9.0\n",
			line:  7, secret: "hunter2",
		},
		{
			name:  "Secret SOPS-encrypted is fine",
			fleet: "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: shop\ndata:\n  password: ENC[AES256_GCM,data:abc=,iv:x=,tag:y=,type:str]\nsops:\n  version: 3.9.0\n",
		},
		{
			name:  "ConfigMap credential key",
			fleet: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: shop\ndata:\n  LOG_LEVEL: debug\n  DB_PASSWORD: hunter2\n",
			line:  8, secret: "hunter2",
		},
		{
			name:  "ConfigMap password file is fine",
			fleet: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: shop\ndata:\n  DB_PASSWORD_FILE: /run/secrets/db\n  HOMEPAGE: https://example.com/path\n",
		},
		{
			name:  "ConfigMap base64 PEM in binaryData",
			fleet: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: shop\nbinaryData:\n  tls.key: " + pemBase64 + "\n",
			line:  7, secret: pemBase64[40:],
		},
		{
			name:  "ConfigMap base64 PEM in data",
			fleet: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: shop\ndata:\n  key.b64: " + pemBase64 + "\n",
			line:  7, secret: pemBase64[40:],
		},
		{
			name:  "ConfigMap base64 token in binaryData",
			fleet: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: shop\nbinaryData:\n  gh: " + base64.StdEncoding.EncodeToString([]byte(githubToken+"\n")) + "\n",
			line:  7, secret: githubToken,
		},
		{
			name:  "YAML escapes spelling a token",
			fleet: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: shop\ndata:\n  note: \"\\x67hp_" + strings.Repeat("aB3d", 9) + "\"\n",
			line:  7, secret: githubToken,
		},
		{
			name:  "Secret inside a List",
			fleet: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: s\n    namespace: shop\n  stringData:\n    password: hunter2\n",
			line:  10, secret: "hunter2",
		},
		{
			name:  "Ingress in a List",
			fleet: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: networking.k8s.io/v1\n  kind: Ingress\n  metadata:\n    name: i\n    namespace: shop\n  spec:\n    rules:\n    - host: 169.254.169.254\n",
			line:  11,
		},
	}
}

// TestGates runs every case through both gates, checks each refuses what it
// should at the right place without showing the secret, and compares the
// messages with testdata/gates.golden.
func TestGates(t *testing.T) {
	t.Parallel()
	cases := gateCases()
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	messages := make([][]string, len(cases))
	t.Run("cases", func(t *testing.T) {
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				secret := tc.secret
				if secret == "" {
					secret = tc.env[1]
				}
				if tc.fleet == "" {
					messages[i] = checkSpecGate(t, tc, secret)
				}
				messages[i] = append(messages[i], checkVerifyGate(t, tc, secret)...)
			})
		}
	})
	var got strings.Builder
	for i, tc := range cases {
		fmt.Fprintf(&got, "# %s\n", tc.name)
		for _, m := range messages[i] {
			got.WriteString(m + "\n")
		}
	}
	golden.File(t, filepath.Join("testdata", "gates.golden"), got.String())
}

func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func list(ss []string) string {
	b, _ := json.Marshal(ss)
	return string(b)
}

// specDoc is the app spec of a case.
func specDoc(tc gateCase) (doc, at string) {
	if tc.values != "" {
		return "name: app\ncomponents:\n  - name: db\n    type: addon\n    addon_spec:\n      type: generic\n" +
			"      chart: {repo: https://charts.example.com, name: db, version: 1.0.0}\n      values: " + tc.values + "\n", "components[0].addon_spec.values." + tc.at
	}
	var b strings.Builder
	b.WriteString("name: app\ncomponents:\n  - name: web\n    type: workload\n    workload_spec:\n      image: nginx:1.27\n      port: 80\n")
	if tc.command != nil {
		b.WriteString("      command: " + list(tc.command) + "\n")
	}
	if tc.args != nil {
		b.WriteString("      args: " + list(tc.args) + "\n")
	}
	at = tc.at
	if tc.env[0] != "" {
		// $(NAME) must name an earlier entry: the variables a value
		// refers to come first, from a Secret.
		b.WriteString("      env:\n")
		refs := envRef.FindAllStringSubmatch(tc.env[1], -1)
		for _, r := range refs {
			b.WriteString("        - {name: " + r[1] + ", secret_ref: {name: app, key: " + strings.ToLower(r[1]) + "}}\n")
		}
		b.WriteString("        - {name: " + tc.env[0] + ", value: " + q(tc.env[1]) + "}\n")
		at = strings.Replace(at, "env[0]", fmt.Sprintf("env[%d]", len(refs)), 1)
	}
	if tc.host != "" {
		b.WriteString("      ingress: {enabled: true, host: " + q(tc.host) + "}\n")
	}
	return b.String(), "components[0].workload_spec." + at
}

// envRef matches a $(NAME) that Kubernetes expands.
var envRef = regexp.MustCompile(`(?:^|[^$])\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// checkSpecGate runs a case through render validate and returns its
// messages.
func checkSpecGate(t *testing.T, tc gateCase, secret string) []string {
	l, err := validate.NewLoader(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	doc, at := specDoc(tc)
	// The cases hold one container each, with no probes or requests: the
	// policy warnings about those are not what this test is about.
	_, ps := l.LoadFiles(map[string][]byte{"apps/shop/app/app.yaml": []byte(doc),
		"platform.yaml": []byte("policy: {require_probes: off, require_requests: off}\n")})
	var out []string
	for _, p := range ps.Sort() {
		out = append(out, "render validate: "+p.Error())
	}
	if tc.at == "" {
		if len(ps) > 0 {
			t.Errorf("render validate refused an allowed literal:\n%v\nin\n%s", ps, doc)
		}
		return out
	}
	found := false
	for _, p := range ps {
		if p.Path == at {
			found = true
		}
		if secret != "" && strings.Contains(p.Error(), secret) {
			t.Errorf("render validate shows the secret: %s", p.Error())
		}
	}
	if !found {
		t.Errorf("render validate: no problem at %s; got:\n%v\nin\n%s", at, ps, doc)
	}
	return out
}

// fleetDoc is the fleet object of a case, as render writes it, and the line
// of the refusal.
func fleetDoc(tc gateCase) (string, int) {
	if tc.fleet != "" {
		return tc.fleet, tc.line
	}
	var b strings.Builder
	lines := map[string]int{}
	add := func(field, s string) {
		if field != "" {
			lines[field] = strings.Count(b.String(), "\n") + 1
		}
		b.WriteString(s)
	}
	switch {
	case tc.values != "":
		add("", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: db\n  namespace: shop\nspec:\n  interval: 1h\n"+
			"  chart:\n    spec:\n      chart: db\n      sourceRef: {kind: HelmRepository, name: db}\n")
		add(tc.at, "  values: "+tc.values+"\n")
	case tc.host != "":
		add("", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  rules:\n")
		add("ingress.host", "    - host: "+q(tc.host)+"\n")
	default:
		add("", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  selector: {matchLabels: {app: web}}\n"+
			"  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n        - name: web\n          image: nginx:1.27\n")
		if tc.command != nil {
			add("", "          command:\n")
			for _, w := range tc.command {
				add("", "            - "+q(w)+"\n")
			}
		}
		if tc.args != nil {
			add("", "          args:\n")
			for i, w := range tc.args {
				add(fmt.Sprintf("args[%d]", i), "            - "+q(w)+"\n")
			}
		}
		if tc.env[0] != "" {
			add("", "          env:\n")
			add("env[0].value", "            - {name: "+tc.env[0]+", value: "+q(tc.env[1])+"}\n")
		}
	}
	return b.String(), lines[tc.at]
}

// checkVerifyGate runs a case through verify and returns its messages.
func checkVerifyGate(t *testing.T, tc gateCase, secret string) []string {
	doc, line := fleetDoc(tc)
	dir := golden.TempFiles(t, map[string]string{"clusters/c1/objects.yaml": doc})
	rep, err := verify.Run(t.Context(), verify.Options{FleetDir: dir, Display: "fleet", Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []verify.Finding
	var out []string
	for _, f := range rep.Findings {
		if f.Check == verify.CheckSecret || f.Check == verify.CheckIngressHost {
			got = append(got, f)
			out = append(out, "verify: "+f.String())
		}
		if secret != "" && strings.Contains(f.String(), secret) {
			t.Errorf("verify shows the secret: %s", f.String())
		}
	}
	refused := tc.at != "" || tc.line != 0
	switch {
	case !refused && len(got) > 0:
		t.Errorf("verify refused an allowed literal: %v\nin\n%s", got, doc)
	case refused:
		if !slices.ContainsFunc(got, func(f verify.Finding) bool { return f.File == "fleet/clusters/c1/objects.yaml" && f.Line == line }) {
			t.Errorf("verify: no finding at line %d; got %v\nin\n%s", line, got, doc)
		}
	}
	return out
}
