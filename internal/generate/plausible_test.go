package generate_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// plausibleCompose is what plausible/community-edition's compose.yml says
// of each service, written down field by field. Read at commit
// 285eb87186f1123c7e7fa5741c275fb22e6337b8. The web service's user is its
// image's USER (999); the two databases' images start as root and switch
// to their own user.
var plausibleCompose = map[string]map[string]string{
	"plausible_db": {
		"image": "postgres:16-alpine", "env": "POSTGRES_PASSWORD", "volumes": "/var/lib/postgresql/data claim",
		"health": "exec pg_isready -U postgres", "start period": "60s",
	},
	"plausible_events_db": {
		"image": "clickhouse/clickhouse-server:24.3.3.102-alpine",
		"volumes": "/etc/clickhouse-server/config.d/ipv4-only.xml file, /etc/clickhouse-server/config.d/logs.xml file, " +
			"/var/lib/clickhouse claim, /var/log/clickhouse-server claim",
		"health": "http 8123 /ping", "start period": "60s", "ulimits": "nofile 262144",
	},
	"plausible": {
		"image": "ghcr.io/plausible/community-edition:v2.1.3", "command": "sh -c /entrypoint.sh db createdb && /entrypoint.sh db migrate && /entrypoint.sh run",
		"env": "BASE_URL SECRET_KEY_BASE", "optional env": "27 names from the environment", "volumes": "/var/lib/plausible claim",
		"depends on": "plausible_db plausible_events_db", "ulimits": "nofile 65535", "user": "999",
	},
}

// plausibleAll are the fields every compose service has alike.
var plausibleAll = map[string]string{"restart": "always", "replicas": "1"}

// plausibleComponents are the components that are the compose services.
var plausibleComponents = map[string]string{"db": "plausible_db", "events-db": "plausible_events_db", "web": "plausible"}

// plausibleDiffers is every field that differs from the compose file, and
// why (docs/spec.md, "Expressing an existing app", says the same).
var plausibleDiffers = map[string]string{
	"plausible command":           "the migrations are the job migrate, which the web server waits for, so that two replicas do not both migrate",
	"plausible optional env":      "each optional setting is read from the Secret plausible-env, when it holds it",
	"plausible health":            "added: /api/health (require_probes)",
	"plausible replicas":          "2 (production_replicas)",
	"plausible ulimits":           "Kubernetes sets no per-container ulimit: the container runtime's limit applies",
	"plausible_events_db ulimits": "as plausible",
	"plausible_db user":           "70, the image's postgres user, from the start: restricted pod security runs no container as root",
	"plausible_events_db user":    "101, the image's clickhouse user, likewise",
}

// TestPlausibleMatchesCompose renders examples/real-apps' Plausible CE and
// compares each of its services with the compose file, field by field:
// the fields that differ are exactly those plausibleDiffers lists.
func TestPlausibleMatchesCompose(t *testing.T) {
	t.Parallel()
	got := render(t, loadRepo(t, nil, "../../examples/real-apps"), nil)
	const dir = "apps/prod-eu/analytics/plausible/"
	deps := fluxDependencies(t, got["clusters/prod-eu/apps/analytics-plausible.yaml"])
	compared, differ := 0, map[string]string{}
	for _, comp := range slices.Sorted(maps.Keys(plausibleComponents)) {
		service := plausibleComponents[comp]
		var s appsv1.StatefulSet
		decode(t, got[dir+comp+"/statefulset-plausible-"+comp+".yaml"], &s)
		rendered := plausibleFields(&s, service)
		var after []string
		for _, d := range transitive(deps, "analytics-plausible-"+comp) {
			if name, ok := plausibleComponents[strings.TrimPrefix(d, "analytics-plausible-")]; ok {
				after = append(after, name)
			}
		}
		rendered["depends on"] = strings.Join(slices.Sorted(slices.Values(after)), " ")
		want := maps.Clone(plausibleAll)
		maps.Copy(want, plausibleCompose[service])
		for _, field := range slices.Sorted(maps.Keys(rendered)) {
			compared++
			if rendered[field] != want[field] {
				differ[service+" "+field] = fmt.Sprintf("%q, compose %q", rendered[field], want[field])
			}
		}
	}
	checkDiffers(t, differ, plausibleDiffers, "the compose file")
	if compared != 3*12 {
		t.Errorf("compared %d fields, want %d", compared, 3*12)
	}
	t.Logf("Plausible CE: %d of %d fields as the compose file", compared-len(differ), compared)
}

// plausibleFields says what a rendered StatefulSet holds, in the words of
// the plausibleCompose table.
func plausibleFields(s *appsv1.StatefulSet, service string) map[string]string {
	pod := s.Spec.Template.Spec
	c := pod.Containers[0]
	out := map[string]string{"image": c.Image, "replicas": strconv.Itoa(int(deref(s.Spec.Replicas))), "ulimits": ""}
	out["command"] = strings.Join(append(slices.Clone(c.Command), c.Args...), " ")
	// The settings the compose file requires of each service, when set.
	required := map[string][]string{"plausible_db": {"POSTGRES_PASSWORD"}, "plausible": {"BASE_URL", "SECRET_KEY_BASE"}}[service]
	var env []string
	for _, e := range c.Env {
		if slices.Contains(required, e.Name) {
			env = append(env, e.Name)
		}
	}
	out["env"] = strings.Join(slices.Sorted(slices.Values(env)), " ")
	var optional []string
	for _, e := range c.EnvFrom {
		if e.SecretRef != nil {
			optional = append(optional, fmt.Sprintf("secret %s (optional %v)", e.SecretRef.Name, deref(e.SecretRef.Optional)))
		}
	}
	out["optional env"] = strings.Join(optional, ", ")
	claims := map[string]bool{}
	for _, t := range s.Spec.VolumeClaimTemplates {
		claims[t.Name] = true
	}
	var vols []string
	for _, m := range c.VolumeMounts {
		switch {
		case claims[m.Name]:
			vols = append(vols, m.MountPath+" claim")
		case m.SubPath != "" && m.ReadOnly:
			vols = append(vols, m.MountPath+" file")
		}
	}
	out["volumes"] = strings.Join(slices.Sorted(slices.Values(vols)), ", ")
	out["health"], out["start period"] = "", ""
	switch p := c.ReadinessProbe; {
	case p == nil:
	case p.Exec != nil:
		out["health"] = "exec " + strings.Join(p.Exec.Command, " ")
	case p.HTTPGet != nil:
		out["health"] = fmt.Sprintf("http %s %s", p.HTTPGet.Port.String(), p.HTTPGet.Path)
	}
	if p := c.StartupProbe; p != nil {
		out["start period"] = fmt.Sprintf("%ds", p.PeriodSeconds*p.FailureThreshold)
	}
	out["restart"] = "always" // a StatefulSet's pods restart always
	if pod.RestartPolicy != "" && pod.RestartPolicy != corev1.RestartPolicyAlways {
		out["restart"] = string(pod.RestartPolicy)
	}
	out["user"] = ""
	if sc := pod.SecurityContext; sc != nil && sc.RunAsUser != nil {
		out["user"] = strconv.FormatInt(*sc.RunAsUser, 10)
	}
	return out
}

// fluxDependencies reads the dependsOn of each Flux Kustomization in a
// cluster's file of an app.
func fluxDependencies(t *testing.T, data []byte) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var k struct {
			Metadata struct{ Name string } `json:"metadata"`
			Spec     struct {
				DependsOn []struct{ Name string } `json:"dependsOn"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &k); err != nil {
			t.Fatal(err)
		}
		for _, d := range k.Spec.DependsOn {
			out[k.Metadata.Name] = append(out[k.Metadata.Name], d.Name)
		}
	}
	if len(out) == 0 {
		t.Fatal("no dependsOn in the app's Flux Kustomizations")
	}
	return out
}

// transitive lists what name waits for, directly or not.
func transitive(deps map[string][]string, name string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		for _, d := range deps[n] {
			if !seen[d] {
				seen[d] = true
				walk(d)
			}
		}
	}
	walk(name)
	return slices.Sorted(maps.Keys(seen))
}
