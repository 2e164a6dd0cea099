package exports

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestServiceNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ    string
		values map[string]any
		want   []string
		ns     string
	}{
		{"redis", nil, []string{"shop-cache-headless", "shop-cache-master", "shop-cache-replicas"}, "shop"},
		{"redis", map[string]any{"architecture": "standalone", "metrics": map[string]any{"enabled": true}}, []string{"shop-cache-headless", "shop-cache-master", "shop-cache-metrics"}, "shop"},
		{"redis", map[string]any{"sentinel": map[string]any{"enabled": true}}, []string{"shop-cache", "shop-cache-headless"}, "shop"},
		{"postgresql", nil, []string{"shop-cache", "shop-cache-hl"}, "shop"},
		{"postgresql", map[string]any{"architecture": "replication"}, []string{"shop-cache-primary", "shop-cache-primary-hl", "shop-cache-read", "shop-cache-read-hl"}, "shop"},
		{"mysql", nil, []string{"shop-cache", "shop-cache-headless"}, "shop"},
		{"mariadb", map[string]any{"architecture": "replication", "namespaceOverride": "data"}, []string{"shop-cache-primary", "shop-cache-primary-headless", "shop-cache-secondary", "shop-cache-secondary-headless"}, "data"},
		{"mongodb", nil, []string{"shop-cache"}, "shop"},
		{"mongodb", map[string]any{"architecture": "replicaset"}, []string{"shop-cache-arbiter-headless", "shop-cache-headless"}, "shop"},
		{"rabbitmq", map[string]any{"fullnameOverride": "mq"}, []string{"mq", "mq-headless"}, "shop"},
		{"generic", nil, nil, "shop"},
	}
	for _, tt := range tests {
		names, ns, ok := Catalog{}.AddonServices(tt.typ, "shop-cache", "shop", tt.values)
		if !ok {
			t.Errorf("%s %v: not ok", tt.typ, tt.values)
			continue
		}
		if d := cmp.Diff(tt.want, names); d != "" || ns != tt.ns {
			t.Errorf("%s %v: namespace %q, names (-want +got):\n%s", tt.typ, tt.values, ns, d)
		}
	}
	if _, _, ok := (Catalog{}).AddonServices("nosuch", "r", "shop", nil); ok {
		t.Error("an unknown type has Services")
	}
	// Every catalog type has its Services known.
	for _, typ := range Types() {
		if names, _, ok := (Catalog{}).AddonServices(typ, "r", "shop", nil); !ok || typ != Generic && len(names) == 0 {
			t.Errorf("%s: no Services known", typ)
		}
	}
}
