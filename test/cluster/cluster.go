package cluster

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/testenv"
)

// FluxNamespace is the namespace Flux's controllers run for (their
// RUNTIME_NAMESPACE); Start creates it.
const FluxNamespace = "flux-system"

// Cluster is a running control plane (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler), kwok with its fake Nodes, and
// Flux's source-, kustomize-, notification- and helm-controller, all on
// 127.0.0.1. Its fields are set by Start and must not be changed.
type Cluster struct {
	// Kubeconfig is the path of an admin kubeconfig file (a member of
	// system:masters), for CLIs and for processes under test.
	Kubeconfig string
	// Config reaches the API server as that admin.
	Config *rest.Config
	// Client is a controller-runtime client over Config whose scheme is
	// Scheme. Flux's notification kinds (Provider, Alert, Receiver) are not
	// in it: use unstructured objects, or ForwardEvents.
	Client client.Client
	// Scheme is testenv.NewScheme(): client-go's kinds, apiextensions v1,
	// and Flux's kustomize, source and helm kinds.
	Scheme *runtime.Scheme
	// LogDir holds one log file per process, <name>.log.
	LogDir string
	// EventsURL is the address notification-controller receives events on
	// ("http://127.0.0.1:<port>/"); the other controllers post to it.
	EventsURL string
	// ReceiverURL is the base address of notification-controller's webhook
	// receivers ("http://127.0.0.1:<port>"), for Receiver objects.
	ReceiverURL string
	// Nodes are the names of the fake Nodes kwok manages.
	Nodes []string
	// Flux lists Flux's controller processes in start order, the
	// kustomize-controller shards of WithKustomizeShards among them.
	Flux []Controller

	dir      string
	keepLogs bool
	logger   *slog.Logger

	mu    sync.Mutex
	procs []*process

	stopOnce sync.Once
	stopErr  error
}

// ShardLabel is the label whose value picks the kustomize-controller shard
// of a Kustomization (see WithKustomizeShards).
const ShardLabel = "sharding.fluxcd.io/key"

// Controller is one running Flux controller.
type Controller struct {
	// Name is its process name, as in LogDir/<name>.log.
	Name string
	// PID is its process id (its CPU time is in /proc/<pid>/stat).
	PID int
	// MetricsURL serves its Prometheus metrics
	// ("http://127.0.0.1:<port>/metrics").
	MetricsURL string
}

// Start runs the whole environment from binaries built beforehand (it builds
// nothing) and returns when it is ready: the API server answers /readyz,
// every Flux CRD is established, every Node is Ready, and every other
// process answers its health endpoint. It finds the binaries through
// BinDirs (or WithBinDirs) and returns an error naming the build commands,
// never a skip, when they are missing.
//
// ctx and WithStartTimeout bound the start only; the processes run until
// Stop. When Start fails it stops whatever it started.
func Start(ctx context.Context, opts ...Option) (*Cluster, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	// The ports are free when picked, but another process of the machine
	// may bind one first: then the cluster starts again on other ports.
	for attempt := 1; ; attempt++ {
		c, err := start(ctx, cfg)
		if err == nil || attempt == maxStarts || ctx.Err() != nil || !strings.Contains(err.Error(), "address already in use") {
			return c, err
		}
		cfg.logger.Warn("a port of the cluster was taken before it bound it; starting again on other ports", "attempt", attempt)
	}
}

// maxStarts is how many times Start tries when a port it picked is taken.
const maxStarts = 3

// start is one attempt of Start: the control plane in order, each part
// once the one before it answers, then kube-controller-manager,
// kube-scheduler, kwok and Flux at once, and then everything is waited for
// together.
func start(ctx context.Context, cfg config) (_ *Cluster, err error) {
	b := &boot{cfg: cfg}
	if b.tcBin, b.clBin, err = binDirs(cfg); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.startTimeout)
	defer cancel()

	dir, err := os.MkdirTemp(cfg.workDir, "fleetwright-cluster-")
	if err != nil {
		return nil, fmt.Errorf("creating cluster folder: %w", err)
	}
	c := &Cluster{dir: dir, LogDir: filepath.Join(dir, "logs"), keepLogs: cfg.keepLogs, logger: cfg.logger}
	b.c = c
	defer func() {
		if err != nil {
			if len(c.processes()) > 0 {
				var logs strings.Builder
				c.WriteLogsTo(&logs, 10)
				err = fmt.Errorf("%w\n%s", err, logs.String())
			}
			err = errors.Join(err, c.Stop())
		}
	}()
	if err := os.MkdirAll(c.LogDir, 0o700); err != nil {
		return nil, err
	}
	b.began = time.Now()
	cfg.logger.Info("starting cluster", "dir", dir, "testcluster-bin", b.tcBin, "cluster-bin", b.clBin)
	if b.ports, err = freePorts(17 + 2*len(cfg.shards)); err != nil {
		return nil, err
	}
	if b.pk, err = writePKI(filepath.Join(dir, "pki")); err != nil {
		return nil, err
	}
	etcd, err := b.startEtcd(ctx)
	if err != nil {
		return nil, err
	}
	if err := b.startAPIServer(ctx, etcd); err != nil {
		return nil, err
	}
	if err := b.prepare(ctx); err != nil {
		return nil, err
	}
	if err := b.startKube(); err != nil {
		return nil, err
	}
	if err := b.startFlux(); err != nil {
		return nil, err
	}
	if err := b.waitReady(ctx); err != nil {
		return nil, err
	}
	cfg.logger.Info("cluster ready", "host", b.host, "events", c.EventsURL, "took", time.Since(b.began).Round(time.Millisecond))
	return c, nil
}

// binDirs returns the folders of the binaries: those of the options, else
// those BinDirs finds, each checked to hold what it must.
func binDirs(cfg config) (testclusterBin, clusterBin string, err error) {
	testclusterBin, clusterBin = cfg.testclusterBin, cfg.clusterBin
	if testclusterBin == "" || clusterBin == "" {
		a, b, err := BinDirs(cfg.getenv)
		if err != nil {
			return "", "", err
		}
		testclusterBin = cmp.Or(testclusterBin, a)
		clusterBin = cmp.Or(clusterBin, b)
	}
	return testclusterBin, clusterBin, checkBinaries(testclusterBin, clusterBin)
}

// boot is one attempt of Start under way: the cluster so far and what its
// steps share.
type boot struct {
	cfg          config
	c            *Cluster
	tcBin, clBin string
	pk           *pki
	began        time.Time
	// ports are the free ports not handed out yet by next.
	ports []int
	// host is the API server's URL.
	host string
	// checks are the health endpoints of the processes started at once,
	// waited for by waitReady.
	checks []health
	// addresses handed out to the parts started at once.
	storageAddr, eventsAddr, receiverAddr string
}

// health is a process's health endpoint and what its body must hold.
type health struct{ name, url, want string }

// next hands out the next free port as 127.0.0.1:<port>.
func (b *boot) next() string {
	p := b.ports[0]
	b.ports = b.ports[1:]
	return "127.0.0.1:" + strconv.Itoa(p)
}

// startEtcd runs etcd, waits until it is healthy and returns its client
// address.
func (b *boot) startEtcd(ctx context.Context) (string, error) {
	etcdClient, etcdPeer := b.next(), b.next()
	if _, err := b.c.run("etcd", filepath.Join(b.tcBin, "etcd"), nil,
		"--name=default",
		"--data-dir="+filepath.Join(b.c.dir, "etcd"),
		"--listen-client-urls=http://"+etcdClient,
		"--advertise-client-urls=http://"+etcdClient,
		"--listen-peer-urls=http://"+etcdPeer,
		"--initial-advertise-peer-urls=http://"+etcdPeer,
		"--initial-cluster=default=http://"+etcdPeer,
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	); err != nil {
		return "", err
	}
	plain := &http.Client{Timeout: 2 * time.Second}
	return etcdClient, b.c.poll(ctx, "etcd", func(ctx context.Context) error {
		return httpOK(ctx, plain, "http://"+etcdClient+"/health", `"health":"true"`)
	})
}

// startAPIServer runs kube-apiserver on etcd, waits until it is ready, and
// sets the cluster's Config, Kubeconfig, Scheme and Client.
func (b *boot) startAPIServer(ctx context.Context, etcd string) error {
	c, pk := b.c, b.pk
	apiAddr := b.next()
	b.host = "https://" + apiAddr
	if _, err := c.run("kube-apiserver", filepath.Join(b.tcBin, "kube-apiserver"), nil,
		"--etcd-servers=http://"+etcd,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port="+portOf(apiAddr),
		"--cert-dir="+filepath.Join(c.dir, "run", "kube-apiserver"),
		"--tls-cert-file="+pk.servingCert,
		"--tls-private-key-file="+pk.servingKey,
		// Room for a Service per app of the scale benchmark's largest fleets.
		"--service-cluster-ip-range=10.0.0.0/16",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+pk.saPub,
		"--service-account-signing-key-file="+pk.saKey,
		"--token-auth-file="+pk.tokenFile,
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		// A loopback advertise address makes the default endpoint
		// reconciler exit.
		"--endpoint-reconciler-type=none",
	); err != nil {
		return err
	}
	c.Config = pk.restConfig(b.host)
	apiHTTP, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return fmt.Errorf("creating API client: %w", err)
	}
	apiHTTP.Timeout = 5 * time.Second
	if err := c.poll(ctx, "kube-apiserver /readyz", func(ctx context.Context) error {
		return httpOK(ctx, apiHTTP, b.host+"/readyz", "ok")
	}); err != nil {
		return err
	}
	b.cfg.logger.Info("API server ready", "host", b.host, "took", time.Since(b.began).Round(time.Millisecond))

	c.Kubeconfig = filepath.Join(c.dir, "kubeconfig")
	if err := pk.writeKubeconfig(c.Kubeconfig, b.host); err != nil {
		return err
	}
	if c.Scheme, err = testenv.NewScheme(); err != nil {
		return err
	}
	if c.Client, err = client.New(c.Config, client.Options{Scheme: c.Scheme}); err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	return nil
}

// prepare makes what the controllers need before they start: their CRDs,
// established, their namespace and RBAC, and Nodes for kwok to take over.
func (b *boot) prepare(ctx context.Context) error {
	c := b.c
	crds, err := installCRDs(ctx, c.Client, b.clBin)
	if err != nil {
		return err
	}
	if err := c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: FluxNamespace}}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", FluxNamespace, err)
	}
	if err := installFluxRBAC(ctx, c.Client); err != nil {
		return err
	}
	for i := range b.cfg.nodes {
		name := "kwok-node-" + strconv.Itoa(i)
		if err := c.Client.Create(ctx, fakeNode(name)); err != nil {
			return fmt.Errorf("creating Node %s: %w", name, err)
		}
		c.Nodes = append(c.Nodes, name)
	}
	return c.poll(ctx, "Flux CRDs established", func(ctx context.Context) error {
		return established(ctx, c.Client, crds)
	})
}

// startKube runs kube-controller-manager, kube-scheduler and kwok, without
// waiting for them.
func (b *boot) startKube() error {
	c, pk := b.c, b.pk
	kcmAddr, schedAddr, kwokAddr := b.next(), b.next(), b.next()
	b.storageAddr, b.eventsAddr, b.receiverAddr = b.next(), b.next(), b.next()
	c.EventsURL = "http://" + b.eventsAddr + "/"
	c.ReceiverURL = "http://" + b.receiverAddr
	kube := []string{"KUBECONFIG=" + c.Kubeconfig}

	if _, err := c.run("kube-controller-manager", controllerManagerPart.binary(b.clBin), kube,
		"--kubeconfig="+c.Kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port="+portOf(kcmAddr),
		"--tls-cert-file="+pk.servingCert,
		"--tls-private-key-file="+pk.servingKey,
		"--service-account-private-key-file="+pk.saKey,
		"--root-ca-file="+pk.caCert,
		"--controllers=*",
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		// kwok renews the Nodes' leases from one process; on a loaded
		// machine a renewal can come late (with 1,500 pods at load 15, more
		// than 10 minutes late), and past the grace period the node
		// lifecycle controller marks every pod not Ready, which kwok does
		// not undo: health checks then wait forever. No test runs an hour.
		"--node-monitor-grace-period=1h",
		// The defaults (20 requests per second, 5 Deployments and
		// ReplicaSets synced at once) make a fleet of hundreds of apps wait
		// on the controller-manager's status updates rather than on Flux,
		// which is what the scale benchmark measures: a pod is Ready, its
		// Deployment says so minutes later.
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--concurrent-deployment-syncs=20",
		"--concurrent-replicaset-syncs=20",
	); err != nil {
		return err
	}
	b.checks = append(b.checks, health{"kube-controller-manager", "https://" + kcmAddr + "/healthz", "ok"})

	if _, err := c.run("kube-scheduler", schedulerPart.binary(b.clBin), kube,
		"--kubeconfig="+c.Kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port="+portOf(schedAddr),
		"--tls-cert-file="+pk.servingCert,
		"--tls-private-key-file="+pk.servingKey,
		"--leader-elect=false",
	); err != nil {
		return err
	}
	b.checks = append(b.checks, health{"kube-scheduler", "https://" + schedAddr + "/healthz", "ok"})

	if _, err := c.run("kwok", kwokPart.binary(b.clBin), kube,
		"--kubeconfig="+c.Kubeconfig,
		"--config="+filepath.Join(kwokPart.dir(b.clBin), "stages.yaml"),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector="+kwokNodeAnnotation+"=fake",
		"--manage-nodes-with-label-selector=",
		"--manage-single-node=",
		"--cidr=10.244.0.0/16",
		"--node-ip=10.1.0.1",
		"--server-address="+kwokAddr,
	); err != nil {
		return err
	}
	b.checks = append(b.checks, health{"kwok", "http://" + kwokAddr + "/healthz", "ok"})
	return nil
}

// fluxProc is a Flux controller to start: its process name, its part and
// its arguments.
type fluxProc struct {
	name string
	p    part
	args []string
	// metricsURL is where it serves its metrics.
	metricsURL string
}

// fluxProc returns the Flux controller name of part p with the arguments
// every controller takes (its metrics and health addresses among them),
// then extra; its health endpoint joins the checks.
func (b *boot) fluxProc(name string, p part, extra ...string) fluxProc {
	metrics, healthAddr := b.next(), b.next()
	b.checks = append(b.checks, health{name, "http://" + healthAddr + "/readyz", ""})
	args := append([]string{
		"--watch-all-namespaces=true",
		"--enable-leader-election=false",
		"--metrics-addr=" + metrics,
		"--health-addr=" + healthAddr,
	}, extra...)
	return fluxProc{name: name, p: p, args: args, metricsURL: "http://" + metrics + "/metrics"}
}

// startFlux runs Flux's controllers (kustomize-controller in its shards),
// without waiting for them, and lists them in the cluster's Flux.
func (b *boot) startFlux() error {
	c, cfg := b.c, b.cfg
	storage := filepath.Join(c.dir, "run", "source-controller", "storage")
	if err := os.MkdirAll(storage, 0o700); err != nil {
		return err
	}
	var lockdown []string
	if !cfg.noLockdown {
		lockdown = LockdownArgs
	}
	kustomize := func(name string, selector ...string) fluxProc {
		args := append(append([]string{"--no-remote-bases=true", "--events-addr=" + c.EventsURL}, lockdown...), selector...)
		return b.fluxProc(name, kustomizeControllerPart, append(args, cfg.fluxArgs[kustomizeControllerPart.name]...)...)
	}
	procs := []fluxProc{
		b.fluxProc(sourceControllerPart.name, sourceControllerPart, append([]string{
			"--storage-path=" + storage,
			"--storage-addr=" + b.storageAddr,
			"--storage-adv-addr=" + b.storageAddr,
			"--events-addr=" + c.EventsURL,
		}, cfg.fluxArgs[sourceControllerPart.name]...)...),
	}
	if len(cfg.shards) == 0 {
		procs = append(procs, kustomize(kustomizeControllerPart.name))
	} else {
		procs = append(procs, kustomize(kustomizeControllerPart.name, "--watch-label-selector=!"+ShardLabel))
		for _, key := range cfg.shards {
			procs = append(procs, kustomize(kustomizeControllerPart.name+"-"+key, "--watch-label-selector="+ShardLabel+" in ("+key+")"))
		}
	}
	procs = append(procs,
		b.fluxProc(notificationControllerPart.name, notificationControllerPart, append([]string{
			"--events-addr=" + b.eventsAddr,
			"--receiverAddr=" + b.receiverAddr,
		}, cfg.fluxArgs[notificationControllerPart.name]...)...),
		b.fluxProc(helmControllerPart.name, helmControllerPart, slices.Concat([]string{
			"--events-addr=" + c.EventsURL,
		}, lockdown, cfg.fluxArgs[helmControllerPart.name])...),
	)
	env := []string{"KUBECONFIG=" + c.Kubeconfig, "RUNTIME_NAMESPACE=" + FluxNamespace}
	for _, f := range procs {
		p, err := c.run(f.name, f.p.binary(b.clBin), slices.Concat(env, cfg.fluxEnv[f.p.name]), f.args...)
		if err != nil {
			return err
		}
		c.Flux = append(c.Flux, Controller{Name: f.name, PID: p.cmd.Process.Pid, MetricsURL: f.metricsURL})
	}
	return nil
}

// waitReady waits until every process started at once answers its health
// endpoint, every Flux controller its metrics one, and every Node is Ready.
func (b *boot) waitReady(ctx context.Context) error {
	c := b.c
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b.pk.caPEM)
	probe := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}
	for _, h := range b.checks {
		if err := c.poll(ctx, h.name+" health", func(ctx context.Context) error {
			return httpOK(ctx, probe, h.url, h.want)
		}); err != nil {
			return err
		}
	}
	// A Flux controller answers its health endpoint before it binds its
	// metrics one, and ends if that port was taken meanwhile.
	for _, f := range c.Flux {
		if err := c.poll(ctx, f.Name+" metrics", func(ctx context.Context) error {
			return httpOK(ctx, probe, f.MetricsURL, "")
		}); err != nil {
			return err
		}
	}
	return c.poll(ctx, "Nodes Ready", func(ctx context.Context) error {
		return nodesReady(ctx, c.Client, c.Nodes)
	})
}

// run starts one process of the cluster with env (plus HOME, TMPDIR and a
// fixed PATH inside its own folder) and records it for Stop.
func (c *Cluster) run(name, bin string, env []string, args ...string) (*process, error) {
	runDir := filepath.Join(c.dir, "run", name)
	for _, d := range []string{"home", "tmp"} {
		if err := os.MkdirAll(filepath.Join(runDir, d), 0o700); err != nil {
			return nil, err
		}
	}
	env = append([]string{
		"HOME=" + filepath.Join(runDir, "home"),
		"TMPDIR=" + filepath.Join(runDir, "tmp"),
		"PATH=/usr/local/bin:/usr/bin:/bin",
	}, env...)
	p, err := startProcess(name, bin, runDir, c.LogDir, args, env)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	c.logger.Info("started", "process", name, "pid", p.cmd.Process.Pid)
	return p, nil
}

// PIDs returns the process id of every process of the cluster by name
// (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok and
// each Flux controller), for measurements such as their CPU time.
func (c *Cluster) PIDs() map[string]int {
	out := map[string]int{}
	for _, p := range c.processes() {
		out[p.name] = p.cmd.Process.Pid
	}
	return out
}

func (c *Cluster) processes() []*process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*process(nil), c.procs...)
}

// pollInterval is how often Start checks a condition it waits for.
const pollInterval = 50 * time.Millisecond

// poll calls check until it returns nil, a process of the cluster ends, or
// ctx is done.
func (c *Cluster) poll(ctx context.Context, what string, check func(context.Context) error) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		last := check(ctx)
		if last == nil {
			return nil
		}
		for _, p := range c.processes() {
			if err := p.exited(); err != nil {
				return fmt.Errorf("waiting for %s: %w", what, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %v)", what, ctx.Err(), last)
		case <-t.C:
		}
	}
}

// httpOK checks that GET url answers 200 with a body containing want.
func httpOK(ctx context.Context, hc *http.Client, url, want string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	if !strings.Contains(string(body), want) {
		return fmt.Errorf("GET %s: body %q lacks %q", url, body, want)
	}
	return nil
}

// freePorts returns n distinct free TCP ports on 127.0.0.1. The listeners are
// held until all are chosen, then closed; another process could still take
// one before the cluster binds it, which Start then reports. The ports are
// picked at random below the kernel's ephemeral range, where the outgoing
// connections of every process on the machine (the cluster's own included)
// take their local ports: a port the kernel hands out with 127.0.0.1:0 is in
// that range, and a connection made while the cluster starts can take it
// first.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	low := ephemeralLow()
	for tries := 0; len(ports) < n; tries++ {
		addr := "127.0.0.1:0"
		if low > minPort && tries < 50*n {
			addr = "127.0.0.1:" + strconv.Itoa(minPort+rand.IntN(low-minPort))
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			if addr == "127.0.0.1:0" {
				return nil, fmt.Errorf("finding a free port: %w", err)
			}
			continue
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// minPort is the lowest port freePorts picks: above the well-known and the
// commonly configured service ports.
const minPort = 20000

// ephemeralLow is the first port of the kernel's ephemeral range (0 where
// it cannot be read: then freePorts asks the kernel for ports).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	low, err := strconv.Atoi(f[0])
	if err != nil {
		return 0
	}
	return low
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

// stopGrace is how long each tier of processes has to exit after SIGTERM
// before it gets SIGKILL.
const stopGrace = 5 * time.Second

// Stop ends every process, the controllers first and etcd last, each whole
// process group with SIGTERM and, after a grace period, SIGKILL. Unless
// WithKeepLogs was given it then removes the cluster's folder (logs
// included). Calling it again returns the first call's result.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		began := time.Now()
		procs := c.processes()
		var tiers [][]*process
		var rest []*process
		for _, p := range procs {
			switch p.name {
			case "etcd", "kube-apiserver":
			default:
				rest = append(rest, p)
			}
		}
		tiers = append(tiers, rest)
		for _, name := range []string{"kube-apiserver", "etcd"} {
			for _, p := range procs {
				if p.name == name {
					tiers = append(tiers, []*process{p})
				}
			}
		}
		var errs []error
		for _, tier := range tiers {
			for _, p := range tier {
				p.signal(syscall.SIGTERM)
			}
			deadline := time.Now().Add(stopGrace)
			for _, p := range tier {
				if !p.wait(time.Until(deadline)) {
					p.signal(syscall.SIGKILL)
					if !p.wait(stopGrace) {
						errs = append(errs, fmt.Errorf("%s (pid %d) did not exit", p.name, p.cmd.Process.Pid))
					}
				}
			}
		}
		if c.keepLogs {
			c.logger.Info("cluster stopped; folder kept", "dir", c.dir, "logs", c.LogDir, "took", time.Since(began).Round(time.Millisecond))
		} else if err := os.RemoveAll(c.dir); err != nil {
			errs = append(errs, fmt.Errorf("removing cluster folder: %w", err))
		} else {
			c.logger.Info("cluster stopped", "took", time.Since(began).Round(time.Millisecond))
		}
		if len(errs) > 0 {
			c.stopErr = fmt.Errorf("stopping cluster: %w", errors.Join(errs...))
		}
	})
	return c.stopErr
}

// WriteLogsTo writes the last lines of every process's log to w, one
// section per process in start order, for a failing test to show.
func (c *Cluster) WriteLogsTo(w io.Writer, lines int) {
	for _, p := range c.processes() {
		fmt.Fprintf(w, "==> %s (last %d lines of %s) <==\n%s\n", p.name, lines, p.logPath, p.tail(lines))
	}
}

// StartT starts a cluster for the test t (bounded by t's context and
// WithStartTimeout) and fails the test when it cannot. Cleanup writes the
// logs' tails to the test output when the test failed, then stops the
// cluster. Should the test binary die without running cleanups (a
// timeout), the kernel kills the processes (see Stop).
func StartT(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	c, err := Start(t.Context(), opts...)
	if err != nil {
		t.Fatalf("starting cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			c.WriteLogsTo(t.Output(), 40)
		}
		if err := c.Stop(); err != nil {
			t.Errorf("%v", err)
		}
	})
	return c
}
