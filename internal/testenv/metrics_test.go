package testenv

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
)

// TestMetricsThroughAggregation reads PodMetrics through the API server,
// which proxies metrics.k8s.io to the test's metrics server; the metrics
// server answers nobody but the aggregation layer.
func TestMetricsThroughAggregation(t *testing.T) {
	t.Parallel()
	ms, stop, err := env.ServeMetrics(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	ns := env.Namespace(t)
	ms.SetPods(ns,
		metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Labels: map[string]string{"app": "web"}},
			Containers: []metricsv1beta1.ContainerMetrics{{Name: "web", Usage: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("120m"), corev1.ResourceMemory: resource.MustParse("96Mi")}}}},
		metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: "db-1", Labels: map[string]string{"app": "db"}}})
	mc, err := metricsclient.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	list, err := mc.MetricsV1beta1().PodMetricses(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "web-1" || list.Items[0].Containers[0].Usage.Cpu().MilliValue() != 120 {
		t.Errorf("PodMetrics of app=web = %+v", list.Items)
	}
	if ms.Requests() == 0 {
		t.Error("the metrics server saw no request: the list did not come through the aggregation layer")
	}
	// Straight to the metrics server, without the front-proxy certificate.
	addr := fmt.Sprintf("https://localhost:%d/apis/%s/namespaces/%s/pods", ms.port, MetricsGroupVersion, ns)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the server's CA is not the point
	resp, err := c.Get(addr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET %s without the front-proxy certificate = %d, want 401", addr, resp.StatusCode)
	}
}
