package review

import (
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/fleet"
)

// FuzzSections checks that the sections of kustomization.yaml files and
// ConfigMaps never panic on any pair of files, and that a ConfigMap's
// section never loses a changed file.
func FuzzSections(f *testing.F) {
	f.Add("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n",
		"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\npatches:\n- patch: \"- op: add\\n  path: /x\\n  value: 1\\n\"\n  target: {kind: Deployment}\n")
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\ndata: {a.conf: \"x\\ny\\n\"}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\ndata: {a.conf: \"x\\nz\\n\", b.conf: w}\nbinaryData: {c.bin: AAAA}\n")
	f.Fuzz(func(t *testing.T, old, new string) {
		ch := fleet.Change{Path: "apps/c/p/a/x/kustomization.yaml", Op: fleet.Update, Old: []byte(old), New: []byte(new)}
		kustomizationDiff(ch)
		ch.Path = "apps/c/p/a/x/configmap-c.yaml"
		base := parseFleet(map[string][]byte{ch.Path: ch.Old})
		head := parseFleet(map[string][]byte{ch.Path: ch.New})
		ix := newIndex(base, head)
		bo, bok := ix.fileObject(ch.Path, 0)
		ho, hok := ix.fileObject(ch.Path, 1)
		if !bok || !hok || bo.Kind != "ConfigMap" || ho.Kind != "ConfigMap" {
			return
		}
		d := configMapDiff(ch, &bo, &ho, ix.mountPaths(ho))
		nd, _ := ho.Obj["data"].(map[string]any)
		od, _ := bo.Obj["data"].(map[string]any)
		for k, v := range nd {
			if s, ok := v.(string); ok && od[k] != v && s != "" && !strings.Contains(d, k) {
				t.Errorf("file %q changed but the section does not name it:\n%s", k, d)
			}
		}
	})
}
