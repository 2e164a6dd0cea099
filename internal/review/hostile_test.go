package review_test

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/review"
)

// hostile are values a team (or anyone who edits the fleet by hand) may
// put in a field the comment shows: the first hides everything after it
// on GitHub when written raw (a code span closed early, a blank line that
// ends the table, an HTML comment left open).
var hostile = []string{
	"`\n\n<!--",
	"a|b</details><script>alert(1)</script>&amp;",
	"```\n# Danger\n- [x](javascript:alert(1)) *b* _i_ ~~s~~",
	"`` ` ``` \\|\\",
	"\r\n| a | b |\r\n|---|---|",
	" \x00\x1b[31m\u202e\u2028\x7f ",
	"<!-- ",
}

// yq is a value as a YAML double-quoted scalar.
func yq(s string) string { return strconv.Quote(s) }

// seg is a value as one segment of a path: Git allows any byte but "/"
// and NUL.
func seg(s string) string { return strings.NewReplacer("/", "÷", "\x00", "").Replace(s) }

// hostileFleets are the seed's fleets (with fleet.artifacts) before and
// after a change that puts v(i) in every field of the comment that can
// carry a value from the fleet: an image, an env value, an Ingress host,
// a chart's name, version, repository and values, a file's name, a
// ClusterRoleBinding's name, role and subject, an object's kind, an app
// folder's name with a workload's name, namespace, app label, container
// and image, a pinned digest, a Namespace, a removed claim's name and
// class, a Service's type, a CronJob's schedule, a Role's rules, and a
// patch whose error quotes its path.
func hostileFleets(t *testing.T, v func(i int) string) (base, head map[string][]byte) {
	t.Helper()
	art := withArtifacts(seedFiles(t))
	_, base = renderFiles(t, art)
	_, head = renderFiles(t, imageBump(art))
	const api = "apps/default/my-project/my-api/api/"
	const pg = "apps/default/my-project/my-api/postgres/"
	put := func(files map[string][]byte, p, text string) { files[p] = []byte(text) }
	edit := func(files map[string][]byte, p, old, new string) {
		t.Helper()
		if !strings.Contains(string(files[p]), old) {
			t.Fatalf("%s does not contain %q", p, old)
		}
		files[p] = []byte(strings.ReplaceAll(string(files[p]), old, new))
	}
	edit(head, seedDep, "image: myorg/my-api:v1.3.0", "image: "+yq(v(1)))
	edit(head, seedDep, "value: production", "value: "+yq(v(31)))
	edit(head, api+"ingress-my-api-api.yaml", "api.my-project.example.com", yq(v(2)))
	edit(head, pg+"helmrelease-my-api-postgres.yaml", `version: "13.4.4"`, "version: "+yq(v(3)))
	edit(head, pg+"helmrelease-my-api-postgres.yaml", "chart: postgresql", "chart: "+yq(v(4)))
	edit(head, pg+"helmrepository-my-api-postgres.yaml", "url: https://charts.bitnami.com/bitnami", "url: "+yq(v(5)))
	edit(head, pg+"helmrelease-my-api-postgres.yaml", "database: myapp", "database: "+yq(v(6)))
	crb, widget, ns := seg(v(7))+".yaml", "widget.yaml", "namespace.yaml"
	put(head, api+crb, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: "+yq(v(8))+
		"\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: "+yq(v(9))+
		"\nsubjects:\n- kind: ServiceAccount\n  name: "+yq(v(10))+"\n  namespace: my-project\n")
	put(head, api+widget, "apiVersion: example.com/v1\nkind: "+yq(v(11))+"\nmetadata:\n  name: "+yq(v(12))+"\n  namespace: my-project\n")
	put(head, api+ns, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+yq(v(20))+"\n  labels:\n    pod-security.kubernetes.io/enforce: "+yq(v(21))+"\n")
	put(base, api+"pvc.yaml", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: "+yq(v(22))+"\n  namespace: my-project\n"+
		"spec:\n  storageClassName: "+yq(v(23))+"\n  resources:\n    requests:\n      storage: 1Gi\n")
	edit(base, api+"kustomization.yaml", "- service-my-api-api.yaml\n", "- service-my-api-api.yaml\n- pvc.yaml\n- cronjob.yaml\n")
	edit(head, api+"kustomization.yaml", "- service-my-api-api.yaml\n", "- service-my-api-api.yaml\n- "+yq(crb)+"\n- "+widget+"\n- "+ns+"\n- cronjob.yaml\n")
	put(head, api+"role.yaml", "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\n  namespace: my-project\n"+
		"rules:\n- apiGroups: ['']\n  verbs: ["+yq(v(28))+"]\n  resources: ["+yq(v(29))+"]\n  resourceNames: ["+yq(v(30))+"]\n")
	edit(head, api+"service-my-api-api.yaml", "type: ClusterIP", "type: "+yq(v(24)))
	cron := func(schedule string) string {
		return "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: nightly\n  namespace: my-project\nspec:\n  schedule: " + yq(schedule) + "\n"
	}
	put(base, api+"cronjob.yaml", cron(v(25)))
	put(head, api+"cronjob.yaml", cron(v(26)))
	web := "apps/default/my-project/" + seg(v(13)) + "/web/"
	put(head, web+"deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: "+yq(v(14))+
		"\n  namespace: "+yq(v(15))+"\n  labels:\n    fleetwright.io/app: "+yq(v(16))+"\n    fleetwright.io/component: web\n"+
		"spec:\n  replicas: 1\n  template:\n    metadata:\n      labels:\n        fleetwright.io/app: "+yq(v(16))+"\n        fleetwright.io/component: web\n"+
		"    spec:\n      containers:\n      - name: "+yq(v(17))+"\n        image: "+yq(v(18))+"\n        resources:\n          requests:\n            cpu: 100m\n            memory: 64Mi\n")
	edit(head, pg+"kustomization.yaml", "- helmrepository-my-api-postgres.yaml\n", "- helmrepository-my-api-postgres.yaml\npatches:\n- patch: "+
		yq("- op: test\n  path: /spec/releaseName\n  value: "+yq(v(27))+"\n")+"\n  target:\n    kind: HelmRelease\n")
	head = repinComponents(t, head)
	digest := regexp.MustCompile(`digest: sha256:[0-9a-f]{64}`).FindString(string(head[seedAppFile]))
	if digest == "" {
		t.Fatalf("%s pins no digest", seedAppFile)
	}
	edit(head, seedAppFile, digest, "digest: "+yq(v(19)))
	return base, repinProjects(t, head)
}

// repinComponents pins each component's OCIRepository to the digest its
// folder builds, as render would after a hand edit of the folder.
func repinComponents(t *testing.T, f map[string][]byte) map[string][]byte {
	t.Helper()
	f = maps.Clone(f)
	for p, b := range f {
		s := string(b)
		for _, m := range regexp.MustCompile(`fleetwright.io/artifact-path: (apps/[^_\n][^\n]*)\n`).FindAllStringSubmatch(s, -1) {
			dir := m[1]
			if strings.HasSuffix(dir, "/_flux") {
				continue
			}
			var files []artifact.File
			for _, q := range slices.Sorted(maps.Keys(f)) {
				if name, ok := strings.CutPrefix(q, dir+"/"); ok {
					files = append(files, artifact.File{Name: name, Data: f[q]})
				}
			}
			a, err := artifact.Build(dir, files)
			if err != nil {
				t.Fatal(err)
			}
			i := strings.Index(s, m[0])
			j := i + strings.Index(s[i:], "digest: ") + len("digest: ")
			s = s[:j] + a.Digest.String() + s[j+len(a.Digest.String()):]
		}
		f[p] = []byte(s)
	}
	return f
}

// TestHostileValues renders hostile values into every field of the
// comment that can carry one, and checks that the comment keeps the
// structure it has with plain values: the same headings, tables with the
// same rows and columns, the same danger lines and sections; no raw "<"
// but the comment's own HTML; every code span closed.
func TestHostileValues(t *testing.T) {
	t.Parallel()
	plain := func(i int) string { return fmt.Sprintf("plain-%d", i) }
	base, head := hostileFleets(t, plain)
	want := review.Build(review.Input{Base: base, Head: head, Limit: 1 << 20})
	wantShape := shape(t, want.Body)
	for _, h := range []string{"## fleetwright", "### ⚠️ Danger", "### Flux sources", "### Images", "### Resource requests", "### Changes"} {
		if !slices.Contains(wantShape, "heading "+h) && !slices.ContainsFunc(wantShape, func(s string) bool { return strings.HasPrefix(s, "heading "+h) }) {
			t.Fatalf("the comment with plain values lacks %q:\n%s", h, want.Body)
		}
	}
	for i, h := range hostile {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			base, head := hostileFleets(t, func(i int) string { return fmt.Sprintf("%s%d%s", h, i, h) })
			c := review.Build(review.Input{Base: base, Head: head, Limit: 1 << 20})
			if diff := cmp.Diff(wantShape, shape(t, c.Body)); diff != "" {
				t.Errorf("the comment's structure changes with %q (-plain +hostile):\n%s\n%s", h, diff, c.Body)
			}
			if len(c.Danger) != len(want.Danger) {
				t.Errorf("%d danger lines with %q, %d with plain values", len(c.Danger), h, len(want.Danger))
			}
		})
	}
}

// ownHTML are the tags the comment writes itself.
var ownHTML = regexp.MustCompile(`^(<!-- fleetwright:review -->|<details>|<details open>|</details>|<summary>|</summary>|<code>|</code>)`)

// shape describes a comment's Markdown structure line by line, outside
// fenced code blocks: headings with their text, each table row by its
// columns, list items, HTML blocks, fences and paragraphs. It fails the
// test on a raw "<" that is not the comment's own HTML, a code span that
// is not closed, or a fence left open.
func shape(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	fence := ""
	for n, line := range strings.Split(body, "\n") {
		if fence != "" {
			if strings.HasPrefix(line, fence) && strings.Trim(line, "`") == "" {
				fence = ""
				out = append(out, "fence end")
			}
			continue
		}
		if strings.HasPrefix(line, "```") {
			fence = strings.TrimRight(line, "abcdefghijklmnopqrstuvwxyz")
			out = append(out, "fence "+strings.TrimLeft(line, "`"))
			continue
		}
		text, msg := spans(line)
		if msg != "" {
			t.Errorf("line %d: %s: %s", n+1, msg, line)
		}
		for i := 0; i < len(text); i++ {
			if text[i] == '<' && !ownHTML.MatchString(text[i:]) {
				t.Errorf("line %d: a raw %q: %s", n+1, text[i:min(len(text), i+10)], line)
			}
		}
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "<details"):
			out = append(out, "details") // an HTML block: no Markdown in it
			continue
		case strings.HasPrefix(line, "#"):
			out = append(out, "heading "+line)
		case strings.HasPrefix(line, "|"):
			out = append(out, fmt.Sprintf("row of %d cells", cells(line)))
		case strings.HasPrefix(line, "- "):
			out = append(out, "item")
		case strings.HasPrefix(line, "</details>"):
			out = append(out, "end of details")
		default:
			out = append(out, "paragraph")
		}
	}
	if fence != "" {
		t.Errorf("fence %s is never closed", fence)
	}
	return out
}

// cells counts the cells of a table row as GitHub splits it: at each pipe
// not escaped by a backslash.
func cells(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			if i+1 < len(line) && line[i+1] == '|' {
				i++
			}
		case '|':
			n++
		}
	}
	return n - 1
}

// spans returns a line without its code spans (CommonMark's: a backtick
// string outside a backslash escape, up to the next backtick string of
// the same length), and reports one that is never closed. A line of the
// comment's own HTML is raw HTML, shown as such.
func spans(line string) (text, msg string) {
	if strings.HasPrefix(line, "<details") {
		return line, ""
	}
	var b strings.Builder
	for i := 0; i < len(line); {
		switch line[i] {
		case '\\':
			b.WriteString(line[i:min(len(line), i+2)])
			i += 2
			continue
		case '`':
		default:
			b.WriteByte(line[i])
			i++
			continue
		}
		n := run(line, i)
		j := i + n
		for j < len(line) && run(line, j) != n {
			if line[j] == '`' {
				j += run(line, j)
			} else {
				j++
			}
		}
		if j >= len(line) {
			return b.String(), fmt.Sprintf("the code span at column %d is never closed", i+1)
		}
		i = j + n
	}
	return b.String(), ""
}

func run(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}
