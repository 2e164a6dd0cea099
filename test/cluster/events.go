package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// notificationAPIVersion is the version of Provider and Alert that
// notification-controller NotificationControllerVersion serves.
const notificationAPIVersion = "notification.toolkit.fluxcd.io/v1beta3"

// forwardedKinds are the kinds whose events ForwardEvents forwards.
func forwardedKinds() []string {
	return []string{"GitRepository", "HelmChart", "HelmRelease", "HelmRepository", "Kustomization", "OCIRepository"}
}

// ForwardEvents makes notification-controller post the events of Flux's
// objects to url as Flux's "generic-hmac" provider does: a JSON event body
// with the header X-Signature: sha256=<hex HMAC-SHA256 of the body with
// hmacKey>. It creates in namespace a Secret, a Provider and an Alert, all
// named name; the Alert selects every GitRepository, HelmChart,
// HelmRelease, HelmRepository, Kustomization and OCIRepository, of any
// severity, in each of sourceNamespaces (by default namespace alone). The
// objects take effect at once: Provider and Alert have no status to wait
// for.
func (c *Cluster) ForwardEvents(ctx context.Context, namespace, name, url string, hmacKey []byte, sourceNamespaces ...string) error {
	if len(sourceNamespaces) == 0 {
		sourceNamespaces = []string{namespace}
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Data:       map[string][]byte{"token": hmacKey},
	}
	if err := c.Client.Create(ctx, secret); err != nil {
		return fmt.Errorf("creating Secret %s/%s: %w", namespace, name, err)
	}
	provider := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": notificationAPIVersion,
		"kind":       "Provider",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"type":      "generic-hmac",
			"address":   url,
			"secretRef": map[string]any{"name": name},
		},
	}}
	if err := c.Client.Create(ctx, provider); err != nil {
		return fmt.Errorf("creating Provider %s/%s: %w", namespace, name, err)
	}
	var sources []any
	for _, ns := range sourceNamespaces {
		for _, kind := range forwardedKinds() {
			sources = append(sources, map[string]any{"kind": kind, "name": "*", "namespace": ns})
		}
	}
	alert := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": notificationAPIVersion,
		"kind":       "Alert",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"providerRef":   map[string]any{"name": name},
			"eventSeverity": "info",
			"eventSources":  sources,
		},
	}}
	if err := c.Client.Create(ctx, alert); err != nil {
		return fmt.Errorf("creating Alert %s/%s: %w", namespace, name, err)
	}
	return nil
}
