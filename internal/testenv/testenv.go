package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Env is a running etcd and kube-apiserver with Flux's CRDs installed.
// Its methods are safe for concurrent use by parallel tests.
type Env struct {
	// Config reaches the API server as a member of system:masters.
	Config *rest.Config
	// Client is a controller-runtime client over Config whose scheme is Scheme.
	Client client.Client
	// Scheme holds client-go's kinds and Flux's kinds (see NewScheme).
	Scheme *runtime.Scheme
	// Dynamic is a dynamic client over Config.
	Dynamic dynamic.Interface

	env        *envtest.Environment
	kubeconfig []byte
	frontProxy *frontProxy
	tmp        string
	stopOnce   sync.Once
	stopErr    error
}

// Start runs etcd and kube-apiserver from the folder that BinDir names (or
// WithBinDir), installs Flux's CRDs and waits until they are established
// and served. It returns an error, never skips, when the binaries are
// missing: the message says how to build them.
//
// ctx bounds the CRD installation; each control-plane process is bounded by
// WithStartTimeout. Call Stop to end the processes and remove their data.
func Start(ctx context.Context, opts ...Option) (*Env, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir := cfg.binDir
	if dir == "" {
		var err error
		if dir, err = BinDir(cfg.getenv); err != nil {
			return nil, err
		}
	}
	if err := checkBinaries(dir); err != nil {
		return nil, err
	}
	crds, err := FluxCRDs()
	if err != nil {
		return nil, err
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}

	useExisting := false
	te := &envtest.Environment{
		// Never let USE_EXISTING_CLUSTER point the tests at a real cluster.
		UseExistingCluster:       &useExisting,
		BinaryAssetsDirectory:    dir,
		Scheme:                   scheme,
		ControlPlaneStartTimeout: cfg.startTimeout,
		ControlPlaneStopTimeout:  30 * time.Second,
		CRDInstallOptions: envtest.CRDInstallOptions{
			CRDs:               crds,
			Scheme:             scheme,
			ErrorIfPathMissing: true,
			MaxTime:            30 * time.Second,
		},
	}
	te.ControlPlane.GetAPIServer().Path = filepath.Join(dir, "kube-apiserver")
	te.ControlPlane.Etcd = &envtest.Etcd{Path: filepath.Join(dir, "etcd")}
	// The data lives only as long as the test binary: skip fsync.
	te.ControlPlane.Etcd.Configure().Set("unsafe-no-fsync", "true")
	// The aggregation layer: the API server proxies the API groups that
	// APIService objects register (metrics.k8s.io, say) to their servers.
	tmp, err := os.MkdirTemp("", "fleetwright-testenv-")
	if err != nil {
		return nil, err
	}
	fp, err := newFrontProxy(filepath.Join(tmp, "front-proxy"), te.ControlPlane.GetAPIServer())
	if err != nil {
		return nil, errors.Join(fmt.Errorf("creating the aggregation layer's certificates: %w", err), os.RemoveAll(tmp))
	}
	if cfg.output != nil {
		te.ControlPlane.GetAPIServer().Out = cfg.output
		te.ControlPlane.GetAPIServer().Err = cfg.output
		te.ControlPlane.Etcd.Out = cfg.output
		te.ControlPlane.Etcd.Err = cfg.output
	}

	began := time.Now()
	cfg.logger.Info("starting test API server", "bin", dir, "version", KubeVersion)
	restCfg, err := te.Start()
	if err != nil {
		// Start may fail after etcd or the API server came up.
		return nil, errors.Join(fmt.Errorf("starting test API server from %s: %w", dir, err), stopQuietly(te), os.RemoveAll(tmp))
	}
	cfg.logger.Info("test API server up, CRDs served", "took", time.Since(began).Round(time.Millisecond))
	e := &Env{Config: restCfg, Scheme: scheme, env: te, kubeconfig: te.KubeConfig, frontProxy: fp, tmp: tmp}
	if e.Client, err = client.New(restCfg, client.Options{Scheme: scheme}); err != nil {
		return nil, errors.Join(fmt.Errorf("creating client: %w", err), e.Stop())
	}
	if e.Dynamic, err = dynamic.NewForConfig(restCfg); err != nil {
		return nil, errors.Join(fmt.Errorf("creating dynamic client: %w", err), e.Stop())
	}
	if err := waitEstablished(ctx, e.Client, crds); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	cfg.logger.Info("test API server ready", "host", restCfg.Host, "took", time.Since(began).Round(time.Millisecond))
	return e, nil
}

func stopQuietly(te *envtest.Environment) error {
	if err := te.Stop(); err != nil {
		return fmt.Errorf("stopping test API server: %w", err)
	}
	return nil
}

// createGrace is how long after a CRD becomes established the API server
// delays each create of its objects (by this much, so that servers in a
// highly available setup catch up): see the "create" case of crdHandler in
// k8s.io/apiextensions-apiserver/pkg/apiserver/customresource_handler.go.
const createGrace = 2 * time.Second

// waitEstablished polls until every CRD has the Established and
// NamesAccepted conditions, then waits out createGrace so that the first
// test to create an object is not held up.
func waitEstablished(ctx context.Context, c client.Client, crds []*apiextensionsv1.CustomResourceDefinition) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var latest time.Time
	for _, crd := range crds {
		var last error
		err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, types.NamespacedName{Name: crd.Name}, got); err != nil {
				last = err
				return false, nil
			}
			last = fmt.Errorf("conditions %v", got.Status.Conditions)
			est := crdCondition(got, apiextensionsv1.Established)
			if est == nil || est.Status != apiextensionsv1.ConditionTrue {
				return false, nil
			}
			if acc := crdCondition(got, apiextensionsv1.NamesAccepted); acc == nil || acc.Status != apiextensionsv1.ConditionTrue {
				return false, nil
			}
			if t := est.LastTransitionTime.Time; t.After(latest) {
				latest = t
			}
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w (last: %v)", crd.Name, err, last)
		}
	}
	// The server compares the clock with the stored transition time, the
	// same value read here.
	if d := time.Until(latest.Add(createGrace)); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("waiting for CRDs to accept creates: %w", ctx.Err())
		}
	}
	return nil
}

func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) *apiextensionsv1.CustomResourceDefinitionCondition {
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == t {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}

// Stop ends kube-apiserver and etcd and removes their data. Calling it again
// returns the first call's result.
func (e *Env) Stop() error {
	e.stopOnce.Do(func() {
		if err := e.env.Stop(); err != nil {
			e.stopErr = fmt.Errorf("stopping test API server: %w", err)
		}
		e.stopErr = errors.Join(e.stopErr, os.RemoveAll(e.tmp))
	})
	return e.stopErr
}

// Kubeconfig returns a kubeconfig file's bytes, with embedded credentials,
// that reaches the API server as a member of system:masters.
func (e *Env) Kubeconfig() ([]byte, error) {
	if len(e.kubeconfig) == 0 {
		return nil, errors.New("test API server has no kubeconfig")
	}
	return append([]byte(nil), e.kubeconfig...), nil
}

// KubeconfigFile writes the kubeconfig to a file (mode 0600) in the test's
// temporary directory and returns its path, for CLIs under test that take
// --kubeconfig or KUBECONFIG.
func (e *Env) KubeconfigFile(t testing.TB) string {
	t.Helper()
	data, err := e.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatalf("writing kubeconfig: %v", err)
	}
	return path
}

// Namespace creates a namespace with a unique name derived from the test's
// name and returns that name. The namespace is never deleted: the test API
// server runs no namespace controller, so deletion would never finish.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: namespacePrefix(t.Name())}}
	if err := e.Client.Create(t.Context(), ns); err != nil {
		t.Fatalf("creating namespace for %s: %v", t.Name(), err)
	}
	return ns.Name
}

var nonLabel = regexp.MustCompile(`[^a-z0-9]+`)

// namespacePrefix turns a test name into a GenerateName prefix: a DNS label
// start of at most 48 characters ending in "-", leaving room for the
// server's random suffix.
func namespacePrefix(testName string) string {
	s := strings.Trim(nonLabel.ReplaceAllString(strings.ToLower(testName), "-"), "-")
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		s = "t-" + s
	}
	s = strings.TrimRight(s[:min(len(s), 47)], "-")
	return s + "-"
}

// Main starts one Env for a test binary, stores it in *env, runs the tests
// and stops the Env. Use it from TestMain:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }
//
// When the Env cannot start, Main prints why to stderr and returns 1, so the
// package's tests fail rather than skip.
//
// As the owner of the test process, Main also hands controller-runtime's
// process-wide logger the WithLogger logger (by default one that discards);
// otherwise controller-runtime prints a warning with a stack trace once the
// process is 30 seconds old.
func Main(m *testing.M, env **Env, opts ...Option) int {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	ctrllog.SetLogger(logr.FromSlogHandler(cfg.logger.Handler()))

	e, err := Start(context.Background(), opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
