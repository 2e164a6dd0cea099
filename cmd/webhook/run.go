package main

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/spec/validate"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/version"
	"github.com/fleetwright/fleetwright/internal/webhook"
)

type options struct {
	listen          string
	sqlitePath      string
	postgresDSN     string
	postgresDSNFile string
	hmacKeyFile     string
	apiTokenFile    string
	kubeconfig      string
	inCluster       bool
	// clusterKubeconfigs and clusterIngresses are the other clusters'
	// kubeconfigs and ingress addresses, by cluster name
	// (-cluster-kubeconfig, -cluster-ingress-address).
	clusterKubeconfigs namedFlag
	clusterIngresses   namedFlag
	fluxNamespace      string
	caBundle           string
	ingressAddress     string
	expiryWarning      time.Duration
	concurrency        int
	defaultTimeout     time.Duration
	recheck            time.Duration
	githubTokenFile    string
	githubRepo         string
	githubAPIURL       string
	githubRef          string
	githubAppsRepo     string
	shutdownTimeout    time.Duration
	logLevel           string
	version            bool
	// Limits on clients (docs/webhook.md).
	readHeaderTimeout   time.Duration
	readTimeout         time.Duration
	writeTimeout        time.Duration
	idleTimeout         time.Duration
	maxConnections      int
	maxPendingBodyBytes int64
	probeAllowPrivate   bool
	keepDeployments     int
	keepAge             time.Duration
	pruneInterval       time.Duration
	// The status pages (docs/webhook.md).
	viewerTokenFile string
	clusterName     string
	environments    string
	fleetRepoURL    string
	appsRepoURL     string
	sessionTTL      time.Duration
	platformFile    string
	// Who sees what (docs/webhook.md).
	accessFile           string
	oidcIssuer           string
	oidcClientID         string
	oidcClientSecretFile string
	oidcRedirectURL      string
	oidcScopes           string
	oidcGroupsClaim      string
	maxStreams           int
	maxStreamsPerPerson  int
	maxStreamsPerToken   int
	maxStreamsPerAddress int
	// ready, if set, receives the listening address (tests use it).
	ready func(addr string)
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	return parseFlagsHelp(args, io.Discard, stderr, nil)
}

// parseFlagsHelp is parseFlags printing -help to stdout, or handing the
// flags to onHelp when set (see cli.Help.FlagSet).
func parseFlagsHelp(args []string, stdout, stderr io.Writer, onHelp func(*flag.FlagSet)) (options, error) {
	var o options
	fs := help().FlagSet("", stdout, stderr, onHelp)
	fs.BoolVar(&o.version, "version", false, "print the version, commit, build date and Go release, and exit")
	fs.StringVar(&o.listen, "listen", ":8080", "address to listen on")
	fs.StringVar(&o.sqlitePath, "sqlite", "webhook.db", "SQLite history file (used unless a PostgreSQL DSN is given)")
	fs.StringVar(&o.postgresDSN, "postgres-dsn", "", "PostgreSQL DSN of the history store (prefer -postgres-dsn-file when it holds a password)")
	fs.StringVar(&o.postgresDSNFile, "postgres-dsn-file", "", "file holding the PostgreSQL DSN")
	fs.StringVar(&o.hmacKeyFile, "hmac-key-file", "", "file holding the HMAC key of Flux's generic-hmac provider; events must then be signed")
	fs.StringVar(&o.apiTokenFile, "api-token-file", "", "file holding the bearer token of /api/v1 (without it the API answers 503)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to probe (empty: no cluster, unless -in-cluster)")
	fs.BoolVar(&o.inCluster, "in-cluster", false, "use the pod's service account to reach the cluster")
	o.clusterKubeconfigs = namedFlag{flag: "-cluster-kubeconfig", what: "a kubeconfig file"}
	o.clusterIngresses = namedFlag{flag: "-cluster-ingress-address", what: "host:port"}
	fs.Var(&o.clusterKubeconfigs, "cluster-kubeconfig", "NAME=PATH, repeatable: the kubeconfig of another cluster of -platform-file's environments (its context named NAME, else its current context); apps in the environments on it are checked there, and their pages show its pods, events, logs and use")
	fs.Var(&o.clusterIngresses, "cluster-ingress-address", "NAME=HOST:PORT, repeatable: -ingress-address for the cluster NAME of -cluster-kubeconfig")
	fs.StringVar(&o.fluxNamespace, "flux-namespace", "flux-system", "namespace of the apps' Flux Kustomizations")
	fs.StringVar(&o.caBundle, "tls-ca-bundle", "", "PEM file of CAs that verify app certificates (default: the system pool)")
	fs.StringVar(&o.ingressAddress, "ingress-address", "", "host:port to send the reachability probes to (the ingress controller's) instead of resolving each app's host by DNS")
	fs.DurationVar(&o.expiryWarning, "tls-expiry-warning", 14*24*time.Hour, "warn when an app certificate expires sooner than this")
	fs.IntVar(&o.concurrency, "probe-concurrency", 4, "checks running at once")
	fs.DurationVar(&o.defaultTimeout, "default-timeout", 10*time.Minute, "deploy timeout while an app's own (its Kustomizations' spec.timeout) is unknown")
	fs.DurationVar(&o.recheck, "recheck-interval", time.Minute, "how often rolled-out apps are checked again (0 disables)")
	fs.StringVar(&o.githubTokenFile, "github-token-file", "", "file holding a GitHub token; enables deployment statuses")
	fs.StringVar(&o.githubRepo, "github-repo", "", "owner/name of the repository that gets deployment statuses")
	fs.StringVar(&o.githubAPIURL, "github-api-url", "https://api.github.com/", "GitHub REST API base URL")
	fs.StringVar(&o.githubAppsRepo, "github-apps-repo", "", "owner/name of the apps repository, whose pull requests' previews (environments pr-N) are reported there on each pull request's head commit, with the preview section of its review comment kept up to date (default: -github-repo with -github-ref spec-revision; else previews are not reported)")
	fs.StringVar(&o.githubRef, "github-ref", "revision", "ref of GitHub deployments: revision (the fleet commit) or spec-revision (the apps-repo commit)")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long a shutdown waits for requests in flight")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&o.readHeaderTimeout, "read-header-timeout", webhook.DefaultReadHeaderTimeout, "how long a client may take to send a request's headers")
	fs.DurationVar(&o.readTimeout, "read-timeout", webhook.DefaultReadTimeout, "how long a client may take to send a whole request, body included")
	fs.DurationVar(&o.writeTimeout, "write-timeout", webhook.DefaultWriteTimeout, "how long writing an answer may take (an event stream: each write)")
	fs.DurationVar(&o.idleTimeout, "idle-timeout", webhook.DefaultIdleTimeout, "how long an idle keep-alive connection stays open")
	fs.IntVar(&o.maxConnections, "max-connections", webhook.DefaultMaxConnections, "connections open at once; more wait to be accepted")
	fs.Int64Var(&o.maxPendingBodyBytes, "max-pending-body-bytes", webhook.DefaultMaxPendingBodyBytes, "bytes of event bodies buffered before their signature is checked; past it events get 503")
	fs.BoolVar(&o.probeAllowPrivate, "probe-allow-private", false, "let reachability probes connect to any address, those the address filter refuses included (loopback, private, link-local, NAT64 and 6to4 of them…)")
	fs.IntVar(&o.keepDeployments, "keep-deployments", store.DefaultKeepDeployments, "deployments kept per app (0 keeps all)")
	fs.DurationVar(&o.keepAge, "keep-age", store.DefaultKeepAge, "deployments and events older than this are dropped (0 keeps all)")
	fs.DurationVar(&o.pruneInterval, "prune-interval", time.Hour, "how often the history is pruned (0 disables)")
	fs.StringVar(&o.viewerTokenFile, "viewer-token-file", "", "file of viewer tokens, one a line, each followed by the comma-separated projects it opens (a token alone opens every project); they sign in to the status pages and read the API of their projects")
	fs.StringVar(&o.accessFile, "access-file", "", "YAML file mapping OIDC groups, emails and subjects to projects and roles (needed with -oidc-issuer)")
	fs.StringVar(&o.oidcIssuer, "oidc-issuer", "", "issuer URL of the OpenID Connect provider people sign in with (enables single sign-on)")
	fs.StringVar(&o.oidcClientID, "oidc-client-id", "", "the webhook's client ID at the OIDC provider")
	fs.StringVar(&o.oidcClientSecretFile, "oidc-client-secret-file", "", "file holding the webhook's client secret at the OIDC provider")
	fs.StringVar(&o.oidcRedirectURL, "oidc-redirect-url", "", "the webhook's callback as browsers reach it: https://<host>/auth/callback")
	fs.StringVar(&o.oidcScopes, "oidc-scopes", "openid,email,profile", "comma-separated scopes asked for (add groups for Dex and others that send groups only then)")
	fs.StringVar(&o.oidcGroupsClaim, "oidc-groups-claim", "groups", "the ID token claim that holds a person's groups")
	fs.IntVar(&o.maxStreams, "max-streams", webhook.DefaultMaxStreams, "live-update streams open at once, all clients together (below -max-connections; 0: no limit)")
	fs.IntVar(&o.maxStreamsPerPerson, "max-streams-per-person", webhook.DefaultMaxStreamsPerPerson, "streams of one person signed in through OIDC (0: no limit)")
	fs.IntVar(&o.maxStreamsPerToken, "max-streams-per-token", webhook.DefaultMaxStreamsPerToken, "streams of one token, the API token or a viewer token (0: no limit)")
	fs.IntVar(&o.maxStreamsPerAddress, "max-streams-per-address", webhook.DefaultMaxStreamsPerAddr, "streams of one client IP address (0: no limit)")
	fs.StringVar(&o.clusterName, "cluster-name", "", "the cluster's name in the fleet (clusters/<name>): shown on the status pages and used in their rollback commands")
	fs.StringVar(&o.environments, "environments", "", "the platform's environments in order, comma-separated (platform.yaml environments): the app page shows an app's release in each side by side")
	fs.StringVar(&o.fleetRepoURL, "fleet-repo-url", "", "web URL of the fleet repository: the status pages link fleet revisions to <url>/commit/<sha> (or put the commit where the URL says {commit})")
	fs.StringVar(&o.appsRepoURL, "apps-repo-url", "", "web URL of the apps repository: the status pages link spec revisions to its commits, as -fleet-repo-url")
	fs.DurationVar(&o.sessionTTL, "session-ttl", 12*time.Hour, "how long a sign-in to the status pages lasts")
	fs.StringVar(&o.platformFile, "platform-file", "", "the apps repository's platform.yaml: its prices (cpu_hour, memory_gib_hour) price each app's requested resources on the status pages, and its environments' clusters (and previews.cluster, pull requests' previews') tell which apps this webhook's cluster (-cluster-name) runs")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		// The flag package printed the error, and where help is.
		return o, &cli.ExitError{Code: cli.ExitUsage, Err: err, Silent: true}
	}
	if fs.NArg() > 0 {
		return o, cli.Usagef("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return o, o.validate()
}

// validate refuses flags that do not go together or are out of range.
func (o options) validate() error {
	if o.maxConnections < 0 || o.maxPendingBodyBytes <= 0 || o.keepDeployments < 0 || o.keepAge < 0 {
		return cli.Usagef("-max-connections, -keep-deployments and -keep-age must not be negative, -max-pending-body-bytes must be positive")
	}
	if o.sessionTTL <= 0 {
		return cli.Usagef("-session-ttl must be positive")
	}
	if o.maxStreams < 0 || o.maxStreamsPerPerson < 0 || o.maxStreamsPerToken < 0 || o.maxStreamsPerAddress < 0 {
		return cli.Usagef("-max-streams and -max-streams-per-* must not be negative")
	}
	if o.maxConnections > 0 && (o.maxStreams == 0 || o.maxStreams >= o.maxConnections) {
		return cli.Usagef("-max-streams (%d) must be below -max-connections (%d): streams would take every connection, and /readyz and Flux's events would wait", o.maxStreams, o.maxConnections)
	}
	if o.oidcIssuer != "" {
		if o.oidcClientID == "" || o.oidcRedirectURL == "" || o.accessFile == "" {
			return cli.Usagef("-oidc-issuer needs -oidc-client-id, -oidc-redirect-url and -access-file")
		}
		if !strings.HasPrefix(o.oidcIssuer, "https://") {
			return cli.Usagef("-oidc-issuer must be an https URL, not %q", o.oidcIssuer)
		}
	} else if o.accessFile != "" || o.oidcClientID != "" || o.oidcClientSecretFile != "" || o.oidcRedirectURL != "" {
		return cli.Usagef("-access-file and -oidc-client-id, -oidc-client-secret-file, -oidc-redirect-url need -oidc-issuer")
	}
	for _, u := range []struct{ flag, v string }{{"-fleet-repo-url", o.fleetRepoURL}, {"-apps-repo-url", o.appsRepoURL}} {
		if u.v != "" && !strings.HasPrefix(u.v, "https://") && !strings.HasPrefix(u.v, "http://") {
			return cli.Usagef("%s must be an http(s) URL, not %q", u.flag, u.v)
		}
	}
	if o.githubRef != "revision" && o.githubRef != "spec-revision" {
		return cli.Usagef("-github-ref must be revision or spec-revision, not %q", o.githubRef)
	}
	if (o.githubTokenFile == "") != (o.githubRepo == "") {
		return cli.Usagef("-github-token-file and -github-repo go together")
	}
	if o.githubAppsRepo != "" && o.githubRepo == "" {
		return cli.Usagef("-github-apps-repo needs -github-repo and -github-token-file")
	}
	if o.postgresDSN != "" && o.postgresDSNFile != "" {
		return cli.Usagef("give -postgres-dsn or -postgres-dsn-file, not both")
	}
	if o.kubeconfig != "" && o.inCluster {
		return cli.Usagef("give -kubeconfig or -in-cluster, not both")
	}
	if o.ingressAddress != "" {
		if host, port, err := net.SplitHostPort(o.ingressAddress); err != nil || host == "" || port == "" {
			return cli.Usagef("-ingress-address must be host:port, not %q", o.ingressAddress)
		}
		if o.kubeconfig == "" && !o.inCluster {
			return cli.Usagef("-ingress-address needs a cluster to probe: give -kubeconfig or -in-cluster")
		}
	}
	return o.validateClusters()
}

// validateClusters checks -cluster-kubeconfig and -cluster-ingress-address
// against the other flags; serve checks the names against -platform-file.
func (o options) validateClusters() error {
	if len(o.clusterKubeconfigs.values) == 0 {
		if len(o.clusterIngresses.values) > 0 {
			return cli.Usagef("-cluster-ingress-address needs the cluster's -cluster-kubeconfig")
		}
		return nil
	}
	if o.clusterName == "" || o.platformFile == "" {
		return cli.Usagef("-cluster-kubeconfig needs -cluster-name (this webhook's own cluster) and -platform-file (which environment runs on which cluster)")
	}
	for _, nv := range o.clusterKubeconfigs.values {
		if nv.name == o.clusterName {
			return cli.Usagef("-cluster-kubeconfig %s: %s is this webhook's own cluster (-cluster-name): give its kubeconfig with -kubeconfig", nv.name, nv.name)
		}
	}
	for _, nv := range o.clusterIngresses.values {
		if _, ok := o.clusterKubeconfigs.get(nv.name); !ok {
			hint := ""
			if nv.name == o.clusterName {
				hint = " (this webhook's own cluster takes -ingress-address)"
			}
			return cli.Usagef("-cluster-ingress-address %s: no -cluster-kubeconfig %s%s", nv.name, nv.name, hint)
		}
		if host, port, err := net.SplitHostPort(nv.value); err != nil || host == "" || port == "" {
			return cli.Usagef("-cluster-ingress-address %s: must be host:port, not %q", nv.name, nv.value)
		}
	}
	return nil
}

// namedFlag is a repeatable NAME=VALUE flag, each name at most once.
type namedFlag struct {
	flag, what string
	values     []namedValue
}

type namedValue struct{ name, value string }

func (f *namedFlag) String() string {
	if f == nil {
		return ""
	}
	var parts []string
	for _, nv := range f.values {
		parts = append(parts, nv.name+"="+nv.value)
	}
	return strings.Join(parts, ",")
}

// Set adds one NAME=VALUE.
func (f *namedFlag) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || !validClusterName(name) || value == "" {
		return fmt.Errorf("want NAME=%s, NAME a cluster of platform.yaml (a DNS label); got %q", f.what, v)
	}
	if _, dup := f.get(name); dup {
		return fmt.Errorf("cluster %s given twice", name)
	}
	f.values = append(f.values, namedValue{name, value})
	return nil
}

func (f *namedFlag) get(name string) (string, bool) {
	for _, nv := range f.values {
		if nv.name == name {
			return nv.value, true
		}
	}
	return "", false
}

// validClusterName reports whether s is a DNS label, as platform.yaml's
// cluster names are.
func validClusterName(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// readSecret reads a one-line secret file.
func readSecret(path, what string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", what, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s file %s is empty", what, path)
	}
	return s, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "version":
			return runVersion(args[1:], stdout, stderr, nil)
		case "help":
			return runHelp(ctx, args[1:], stdout, stderr)
		case "completion":
			return runCompletion(args[1:], stdout, stderr)
		}
		if !strings.HasPrefix(args[0], "-") {
			return help().UnknownCommand(args[0])
		}
	}
	o, err := parseFlagsHelp(args, stdout, stderr, nil)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if o.version {
		return version.Get().Write(stdout, "webhook", false)
	}
	if err := serve(ctx, o, stdout, stderr); err != nil {
		if _, ok := errors.AsType[*cli.ExitError](err); !ok {
			err = &cli.ExitError{Code: cli.ExitFailed, Err: err}
		}
		return err
	}
	return nil
}

func serve(ctx context.Context, o options, _ io.Writer, stderr io.Writer) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return cli.Usagef("-log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	cfg := webhook.Config{
		Concurrency: o.concurrency, DefaultTimeout: o.defaultTimeout, RecheckInterval: o.recheck,
		FluxNamespace: o.fluxNamespace, Logger: log, Environments: splitList(o.environments),
		ReadHeaderTimeout: orNone(o.readHeaderTimeout), ReadTimeout: orNone(o.readTimeout),
		WriteTimeout: orNone(o.writeTimeout), IdleTimeout: orNone(o.idleTimeout),
		MaxPendingBodyBytes: o.maxPendingBodyBytes,
		Retention:           store.Retention{KeepPerApp: o.keepDeployments, MaxAge: o.keepAge},
		PruneInterval:       orNone(o.pruneInterval),
		Pages: webhook.PagesConfig{ClusterName: o.clusterName, FleetRepoURL: o.fleetRepoURL, AppsRepoURL: o.appsRepoURL,
			SessionTTL: o.sessionTTL, Streams: webhook.StreamLimits{Total: noLimit(o.maxStreams), PerPerson: noLimit(o.maxStreamsPerPerson),
				PerToken: noLimit(o.maxStreamsPerToken), PerAddress: noLimit(o.maxStreamsPerAddress)}},
	}
	if o.recheck == 0 {
		cfg.RecheckInterval = -1
	}
	if o.keepDeployments == 0 && o.keepAge == 0 {
		cfg.PruneInterval = -1 // everything is kept
	}
	if err := readSecrets(o, &cfg, log); err != nil {
		return err
	}
	if err := readPlatform(o.platformFile, &cfg.Pages); err != nil {
		return err
	}
	st, err := openStore(ctx, o, log)
	if err != nil {
		return err
	}
	defer st.Close()
	cfg.Store = st
	if st.Dialect() == "postgres" {
		// Several replicas may share the database: each app gets one owner.
		owners, err := st.Owners(store.OwnersOptions{Logger: log})
		if err != nil {
			return err
		}
		if err := owners.Start(ctx); err != nil {
			return fmt.Errorf("postgres: taking app slots: %w", err)
		}
		// After the server's Stop (deferred calls run last first): its
		// checks are over before another replica takes its apps.
		defer owners.Close()
		cfg.Coordinator = owners
	}
	if err := connectCluster(o, &cfg, log); err != nil {
		return err
	}
	if err := connectClusters(o, &cfg, log); err != nil {
		return err
	}
	if cfg.GitHub, err = githubStatuses(o); err != nil {
		return err
	}
	srv, err := webhook.New(cfg)
	if err != nil {
		return err
	}
	return listenAndServe(ctx, o, srv, &cfg, log)
}

// readSecrets reads the HMAC key, the API token, the viewer tokens and the
// OIDC settings into cfg.
func readSecrets(o options, cfg *webhook.Config, log *slog.Logger) error {
	if o.hmacKeyFile != "" {
		key, err := readSecret(o.hmacKeyFile, "HMAC key")
		if err != nil {
			return err
		}
		cfg.HMACKey = []byte(key)
	} else {
		log.Warn("no -hmac-key-file: events are accepted unsigned")
	}
	if o.apiTokenFile != "" {
		tok, err := readSecret(o.apiTokenFile, "API token")
		if err != nil {
			return err
		}
		cfg.APIToken = tok
	}
	if o.viewerTokenFile != "" {
		b, err := os.ReadFile(o.viewerTokenFile)
		if err != nil {
			return fmt.Errorf("reading viewer tokens: %w", err)
		}
		vs, err := webhook.ParseViewerTokens(o.viewerTokenFile, b)
		if err != nil {
			return cli.Usagef("-viewer-token-file: %w", err)
		}
		for _, v := range vs {
			if v.Token == cfg.APIToken {
				return cli.Usagef("-viewer-token-file holds the API token: give viewers a token of their own")
			}
			if len(v.Token) < 16 {
				log.Warn("a viewer token is shorter than 16 characters: easy to guess; make it longer (openssl rand -hex 32)")
			}
			if slices.Contains(v.Projects, "*") {
				log.Warn("a viewer token opens every project: name its projects after it in -viewer-token-file (token shop,billing)")
			}
		}
		cfg.Pages.ViewerTokens = vs
	}
	if o.oidcIssuer != "" {
		b, err := os.ReadFile(o.accessFile)
		if err != nil {
			return fmt.Errorf("reading the access file: %w", err)
		}
		access, err := webhook.ParseAccess(o.accessFile, b)
		if err != nil {
			return cli.Usagef("-access-file: %w", err)
		}
		secret := ""
		if o.oidcClientSecretFile != "" {
			if secret, err = readSecret(o.oidcClientSecretFile, "OIDC client secret"); err != nil {
				return err
			}
		}
		var scopes []string
		for sc := range strings.SplitSeq(o.oidcScopes, ",") {
			if sc = strings.TrimSpace(sc); sc != "" {
				scopes = append(scopes, sc)
			}
		}
		cfg.Pages.OIDC = webhook.OIDCConfig{Issuer: o.oidcIssuer, ClientID: o.oidcClientID, ClientSecret: secret,
			RedirectURL: o.oidcRedirectURL, Scopes: scopes, GroupsClaim: o.oidcGroupsClaim, Access: access,
			HTTPClient: &http.Client{Timeout: 30 * time.Second}}
	}
	return nil
}

// readPlatform reads a platform file, checked as render checks it, into
// the pages' configuration: its prices, the cluster of each of its
// environments, and the previews' cluster (nothing without a file).
func readPlatform(file string, pc *webhook.PagesConfig) error {
	if file == "" {
		return nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("-platform-file: %w", err)
	}
	l, err := validate.NewLoader(nil, "")
	if err != nil {
		return err
	}
	plat, ps := l.LoadPlatformFile(file, data)
	if ps.HasErrors() {
		return cli.Usagef("-platform-file %s:\n%s", file, ps.Error())
	}
	for _, e := range plat.Environments {
		if pc.EnvironmentClusters == nil {
			pc.EnvironmentClusters = map[string]string{}
		}
		pc.EnvironmentClusters[e.Name] = e.Cluster
	}
	if plat.Previews != nil {
		pc.PreviewCluster = plat.Previews.Cluster
	}
	if plat.Prices != nil {
		pc.Prices = webhook.Prices{CPUHour: plat.Prices.CPUHour, MemoryGiBHour: plat.Prices.MemoryGiBHour, Currency: plat.Prices.Currency}
	}
	return nil
}

// noLimit maps a flag's 0 (no limit) to the config's negative.
func noLimit(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// connectCluster sets cfg's cluster clients and prober when the flags
// name a cluster.
func connectCluster(o options, cfg *webhook.Config, log *slog.Logger) error {
	restCfg, err := restConfig(o)
	if err != nil || restCfg == nil {
		return err
	}
	cl, err := clusterClients(restCfg)
	if err != nil {
		return err
	}
	p, err := newProber(o, cl.Reader, log)
	if err != nil {
		return err
	}
	cfg.Cluster, cfg.Kube, cfg.Metrics, cfg.Prober = cl.Reader, cl.Kube, cl.Metrics, p
	return nil
}

// connectClusters sets cfg.Clusters from -cluster-kubeconfig: each name
// must be the cluster of one of the platform's environments, or of its
// previews (cfg.Pages, from -platform-file). Each cluster's prober shares
// the CA bundle and the address filter of the webhook's own, and sends its
// requests to its own -cluster-ingress-address, or where each host
// resolves to: never to another cluster's ingress controller.
func connectClusters(o options, cfg *webhook.Config, log *slog.Logger) error {
	if len(o.clusterKubeconfigs.values) == 0 {
		return nil
	}
	// The clusters something runs on: each environment's, and the
	// previews'.
	runs := map[string]bool{}
	for _, cluster := range cfg.Pages.EnvironmentClusters {
		runs[cluster] = true
	}
	if c := cfg.Pages.PreviewCluster; c != "" {
		runs[c] = true
	}
	cfg.Clusters = map[string]webhook.Cluster{}
	for _, nv := range o.clusterKubeconfigs.values {
		if !runs[nv.name] {
			return cli.Usagef("-cluster-kubeconfig %s: neither an environment nor the previews of -platform-file %s run on cluster %s (they run on %s)",
				nv.name, o.platformFile, nv.name, strings.Join(slices.Sorted(maps.Keys(runs)), ", "))
		}
		restCfg, err := namedKubeconfig(nv.value, nv.name)
		if err != nil {
			return err
		}
		cl, err := clusterClients(restCfg)
		if err != nil {
			return fmt.Errorf("cluster %s: %w", nv.name, err)
		}
		po := o
		po.ingressAddress, _ = o.clusterIngresses.get(nv.name)
		if cl.Prober, err = newProber(po, cl.Reader, log.With("cluster", nv.name)); err != nil {
			return err
		}
		cfg.Clusters[nv.name] = cl
	}
	return nil
}

// namedKubeconfig loads a kubeconfig file for the cluster name: its
// context named name when it has one (one file can hold every cluster,
// as `kubectl config get-contexts` lists them), else its current context.
func namedKubeconfig(path, name string) (*rest.Config, error) {
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("-cluster-kubeconfig %s: loading %s: %w", name, path, err)
	}
	overrides := &clientcmd.ConfigOverrides{}
	if _, ok := raw.Contexts[name]; ok {
		overrides.CurrentContext = name
	}
	c, err := clientcmd.NewNonInteractiveClientConfig(*raw, overrides.CurrentContext, overrides, &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("-cluster-kubeconfig %s: %s: %w", name, path, err)
	}
	return c, nil
}

// clusterClients returns the clients of the cluster restCfg reaches,
// without a prober.
func clusterClients(restCfg *rest.Config) (webhook.Cluster, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kustomizev1.AddToScheme, sourcev1.AddToScheme, helmv2.AddToScheme} {
		if err := add(scheme); err != nil {
			return webhook.Cluster{}, fmt.Errorf("building scheme: %w", err)
		}
	}
	c, err := client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		return webhook.Cluster{}, fmt.Errorf("creating cluster client: %w", err)
	}
	kube, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return webhook.Cluster{}, fmt.Errorf("creating cluster client: %w", err)
	}
	mc, err := metricsclient.NewForConfig(restCfg)
	if err != nil {
		return webhook.Cluster{}, fmt.Errorf("creating metrics client: %w", err)
	}
	return webhook.Cluster{Reader: c, Kube: kube, Metrics: mc}, nil
}

// githubStatuses is the GitHub repository that gets deployment statuses,
// or nil without -github-token-file.
func githubStatuses(o options) (*webhook.GitHub, error) {
	if o.githubTokenFile == "" {
		return nil, nil
	}
	tok, err := readSecret(o.githubTokenFile, "GitHub token")
	if err != nil {
		return nil, err
	}
	owner, repo, ok := strings.Cut(o.githubRepo, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, cli.Usagef("-github-repo must be owner/name, not %q", o.githubRepo)
	}
	gh, err := github.New(github.Config{BaseURL: o.githubAPIURL, Token: tok, HTTPClient: &http.Client{Timeout: 30 * time.Second}})
	if err != nil {
		return nil, cli.Usagef("-github-api-url: %w", err)
	}
	g := &webhook.GitHub{Reporter: gh, Sections: gh, Repo: github.Repo{Owner: owner, Name: repo}, UseSpecRevision: o.githubRef == "spec-revision"}
	if o.githubAppsRepo != "" {
		if g.AppsRepo, err = github.ParseRepo(o.githubAppsRepo); err != nil {
			return nil, cli.Usagef("-github-apps-repo: %w", err)
		}
	}
	return g, nil
}

// listenAndServe serves srv until ctx ends, then shuts it down: requests
// in flight get o.shutdownTimeout, accepted events are all committed.
func listenAndServe(ctx context.Context, o options, srv *webhook.Server, cfg *webhook.Config, log *slog.Logger) error {
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		srv.Stop()
		return fmt.Errorf("listening: %w", err)
	}
	ln = webhook.LimitListener(ln, o.maxConnections)
	hs := srv.HTTPServer()
	if err := srv.Start(); err != nil {
		srv.Stop()
		_ = ln.Close()
		return err
	}
	log.Info("listening", "addr", ln.Addr().String(), "store", storeName(o), "cluster", cfg.Cluster != nil, "other_clusters", len(cfg.Clusters), "github", cfg.GitHub != nil)
	if o.ready != nil {
		o.ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	shutErr := hs.Shutdown(sctx)
	// Every accepted event is committed before Stop returns.
	srv.Stop()
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", serveErr)
	}
	if shutErr != nil {
		return fmt.Errorf("shutting down: %w", shutErr)
	}
	return nil
}

// newProber returns the prober of the cluster behind c: the CA bundle that
// verifies app certificates and, with -ingress-address, a dialer that sends
// every probe connection to the ingress controller whatever the app's host
// resolves to (the host still names the TLS server and the HTTP request).
func newProber(o options, c client.Reader, log *slog.Logger) (*probe.Prober, error) {
	p := &probe.Prober{Client: c, ExpiryWarning: o.expiryWarning, Logger: log, AllowPrivate: o.probeAllowPrivate}
	if o.caBundle != "" {
		pem, err := os.ReadFile(o.caBundle)
		if err != nil {
			return nil, fmt.Errorf("reading CA bundle: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA bundle %s holds no PEM certificate", o.caBundle)
		}
		p.RootCAs = pool
	}
	p.ConnectTo = o.ingressAddress
	return p, nil
}

// orNone maps a flag's 0 (none) to the config's negative (disabled).
func orNone(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

func storeName(o options) string {
	if o.postgresDSN != "" || o.postgresDSNFile != "" {
		return "postgres"
	}
	return "sqlite:" + o.sqlitePath
}

func openStore(ctx context.Context, o options, log *slog.Logger) (*store.SQL, error) {
	dsn := o.postgresDSN
	if o.postgresDSNFile != "" {
		var err error
		if dsn, err = readSecret(o.postgresDSNFile, "PostgreSQL DSN"); err != nil {
			return nil, err
		}
	}
	if dsn != "" {
		return store.OpenPostgres(ctx, dsn, store.PostgresOptions{Logger: log})
	}
	return store.OpenSQLite(ctx, o.sqlitePath, store.SQLiteOptions{})
}

func restConfig(o options) (*rest.Config, error) {
	switch {
	case o.inCluster:
		c, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster config: %w", err)
		}
		return c, nil
	case o.kubeconfig != "":
		c, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("loading kubeconfig %s: %w", o.kubeconfig, err)
		}
		return c, nil
	}
	return nil, nil
}

// splitList splits a comma-separated flag value, dropping spaces and
// empty items.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
