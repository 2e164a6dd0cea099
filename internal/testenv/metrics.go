package testenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// MetricsGroupVersion is the API the metrics server serves.
const MetricsGroupVersion = "metrics.k8s.io/v1beta1"

var apiServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// MetricsServer serves metrics.k8s.io/v1beta1 PodMetrics over TLS from the
// test process, registered with the API server by an APIService, so that
// clients read them through the API server's aggregation layer, as from
// metrics-server (which needs kubelets to scrape; this one serves what the
// test sets). It answers only the aggregation layer: a request must come
// with the front-proxy client certificate the API server presents.
type MetricsServer struct {
	mu   sync.Mutex
	pods map[string][]metricsv1beta1.PodMetrics // by namespace
	// Requests counts the requests the aggregation layer proxied.
	requests int
	srv      *http.Server
	port     int
}

// SetPods replaces the PodMetrics the server reports in namespace ns.
func (m *MetricsServer) SetPods(ns string, pods ...metricsv1beta1.PodMetrics) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range pods {
		pods[i].Namespace = ns
		pods[i].TypeMeta = metav1.TypeMeta{Kind: "PodMetrics", APIVersion: MetricsGroupVersion}
	}
	m.pods[ns] = pods
}

// Requests returns the number of PodMetrics reads the server answered.
func (m *MetricsServer) Requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests
}

// ServeMetrics starts a MetricsServer and registers it with the API server
// (an ExternalName Service in kube-system pointing at localhost, and the
// APIService v1beta1.metrics.k8s.io with the server's CA), then waits until
// the API server serves metrics.k8s.io/v1beta1. The APIService is
// cluster-wide: a test that serves metrics should have an Env of its own,
// so that tests sharing one see a cluster without a metrics API.
// stop ends it and removes the APIService.
func (e *Env) ServeMetrics(ctx context.Context) (m *MetricsServer, stop func() error, err error) {
	const ns, name = "kube-system", "fleetwright-test-metrics"
	pair, caPEM, err := servingPair(name+"."+ns+".svc", "localhost", "127.0.0.1")
	if err != nil {
		return nil, nil, err
	}
	clientCAs := x509.NewCertPool()
	if !clientCAs.AppendCertsFromPEM(e.frontProxy.caPEM) {
		return nil, nil, errors.New("reading the front-proxy CA")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	m = &MetricsServer{pods: map[string][]metricsv1beta1.PodMetrics{}, port: port}
	m.srv = &http.Server{
		Handler:           m,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12,
			ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: clientCAs,
		},
	}
	go func() { _ = m.srv.ServeTLS(ln, "", "") }()

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	}
	apiSvc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1beta1.metrics.k8s.io"},
		"spec": map[string]any{
			"group": "metrics.k8s.io", "version": "v1beta1",
			"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
			"service":  map[string]any{"namespace": ns, "name": name, "port": int64(port)},
			"caBundle": caPEM,
		},
	}}
	stop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var errs []error
		if err := e.Dynamic.Resource(apiServiceGVR).Delete(ctx, "v1beta1.metrics.k8s.io", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
		if err := e.Client.Delete(ctx, svc); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
		return errors.Join(append(errs, m.srv.Close())...)
	}
	if err := e.Client.Create(ctx, svc); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("creating the metrics Service: %w", err), stop())
	}
	// caBundle is []byte in Go: base64 in JSON.
	raw, err := json.Marshal(apiSvc.Object)
	if err == nil {
		err = json.Unmarshal(raw, &apiSvc.Object)
	}
	if err == nil {
		_, err = e.Dynamic.Resource(apiServiceGVR).Create(ctx, apiSvc, metav1.CreateOptions{})
	}
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("creating the metrics APIService: %w", err), stop())
	}
	dc, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		return nil, nil, errors.Join(err, stop())
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := e.Dynamic.Resource(apiServiceGVR).Get(ctx, "v1beta1.metrics.k8s.io", metav1.GetOptions{})
		if err != nil {
			last = err
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		available := false
		for _, c := range conds {
			if c, ok := c.(map[string]any); ok && c["type"] == "Available" {
				available = c["status"] == "True"
				last = fmt.Errorf("APIService Available=%v: %v: %v", c["status"], c["reason"], c["message"])
			}
		}
		if !available {
			return false, nil
		}
		if _, err := dc.ServerResourcesForGroupVersion(MetricsGroupVersion); err != nil {
			last = fmt.Errorf("discovery of %s: %w", MetricsGroupVersion, err)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("the API server does not serve %s: %w (last: %v)", MetricsGroupVersion, err, last), stop())
	}
	return m, stop, nil
}

// ServeHTTP answers the aggregation layer: discovery of the group version,
// and the PodMetrics of a namespace (list, with a label selector) or of
// one pod.
func (m *MetricsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != FrontProxyClientName {
		http.Error(w, "only the API server's aggregation layer may ask", http.StatusUnauthorized)
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.URL.Path == "/apis/"+MetricsGroupVersion:
		writeJSON(w, http.StatusOK, metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: MetricsGroupVersion,
			APIResources: []metav1.APIResource{
				{Name: "pods", Namespaced: true, Kind: "PodMetrics", Verbs: metav1.Verbs{"get", "list"}},
				{Name: "nodes", Kind: "NodeMetrics", Verbs: metav1.Verbs{"get", "list"}},
			},
		})
	case len(parts) >= 6 && len(parts) <= 7 && strings.Join(parts[:3], "/") == "apis/"+MetricsGroupVersion && parts[3] == "namespaces" && parts[5] == "pods":
		sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.requests++
		pods := m.pods[parts[4]]
		m.mu.Unlock()
		if len(parts) == 7 {
			for _, p := range pods {
				if p.Name == parts[6] {
					writeJSON(w, http.StatusOK, p)
					return
				}
			}
			writeJSON(w, http.StatusNotFound, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
				Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound, Message: "podmetrics " + strconv.Quote(parts[6]) + " not found"})
			return
		}
		list := metricsv1beta1.PodMetricsList{TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: MetricsGroupVersion}, Items: []metricsv1beta1.PodMetrics{}}
		for _, p := range pods {
			if sel.Matches(labels.Set(p.Labels)) {
				list.Items = append(list.Items, p)
			}
		}
		writeJSON(w, http.StatusOK, list)
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
