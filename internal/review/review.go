package review

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// Marker finds the comment again on every push.
const Marker = "<!-- fleetwright:review -->"

// GitHubLimit is the most characters a GitHub comment may hold.
const GitHubLimit = 65536

// Input is what the comment is built from.
type Input struct {
	// Base and Head are the rendered fleets (path → bytes) of the pull
	// request's base and head.
	Base, Head map[string][]byte
	// BaseRepo and HeadRepo are the loaded specs; HeadRepo draws the graphs.
	BaseRepo, HeadRepo *spec.Repo
	// Limit caps the body (default GitHubLimit).
	Limit int
	// FullDiffHint tells readers where the whole diff is (the step summary,
	// an artifact).
	FullDiffHint string
}

// Comment is the built review.
type Comment struct {
	Body     string
	FullDiff string   // every file's unified diff
	Danger   []string // one line per dangerous change
	Changed  []string // apps added, changed or removed (cluster/project/app)
	Cut      []string // objects whose diff did not fit
	Empty    bool     // the fleet does not change
}

type appChange struct {
	key     string // cluster/project/app
	status  string // added, changed, removed
	changes []fleet.Change
}

// Build writes the comment.
func Build(in Input) *Comment {
	limit := in.Limit
	if limit <= 0 {
		limit = GitHubLimit
	}
	changes := diffMaps(in.Base, in.Head)
	c := &Comment{Empty: len(changes) == 0}
	apps := groupByApp(changes, in.Base, in.Head)
	// Objects of files that did not change are the same on both sides and
	// cancel out of every section below, except in the resource totals of
	// a changed app, which count all of its workloads: parse the changed
	// files and the files of changed apps, not the whole fleet.
	changedFiles, changedApps := map[string]bool{}, map[string]bool{}
	for _, ch := range changes {
		changedFiles[ch.Path] = true
	}
	for _, a := range apps {
		changedApps[a.key] = true
	}
	pick := func(files map[string][]byte) map[string][]byte {
		out := map[string][]byte{}
		for p, b := range files {
			if changedFiles[p] || changedApps[layout.AppOf(p)] {
				out[p] = b
			}
		}
		return out
	}
	baseObjs, headObjs := parseFleet(pick(in.Base)), parseFleet(pick(in.Head))

	for _, a := range apps {
		c.Changed = append(c.Changed, a.key)
	}
	c.Danger = dangers(apps, baseObjs, headObjs)
	c.FullDiff = fleet.Diff(changes, "")

	var b strings.Builder
	b.WriteString(Marker + "\n")
	b.WriteString("## fleetwright: what this change does to the fleet\n\n")
	if c.Empty {
		b.WriteString("No fleet file changes.\n")
		c.Body = b.String()
		return c
	}
	if len(c.Danger) > 0 {
		b.WriteString("### ⚠️ Danger\n\n")
		for _, d := range c.Danger {
			b.WriteString("- " + d + "\n")
		}
		b.WriteString("\n")
	}
	writeSummary(&b, apps, baseObjs, headObjs)
	writeImages(&b, baseObjs, headObjs)
	writeResources(&b, baseObjs, headObjs)
	writeGraphs(&b, apps, in.HeadRepo)

	head := b.String()
	b.Reset()
	b.WriteString(head)
	b.WriteString("### Changes\n\n")
	budget := limit - len(head) - 600 // room for the cut note
	used := 0
	for i, ch := range changes {
		sec := section(ch, baseObjs, headObjs)
		if used+len(sec) > budget {
			for _, rest := range changes[i:] {
				c.Cut = append(c.Cut, rest.Path)
			}
			break
		}
		used += len(sec)
		b.WriteString(sec)
	}
	if len(c.Cut) > 0 {
		fmt.Fprintf(&b, "\n> ✂️ %d more file(s) did not fit in this comment", len(c.Cut))
		if in.FullDiffHint != "" {
			b.WriteString("; " + in.FullDiffHint)
		}
		b.WriteString(".\n")
	}
	c.Body = b.String()
	if len(c.Body) > limit { // the head alone is too long: cut it hard
		c.Body = c.Body[:limit-200] + "\n\n> ✂️ cut to fit GitHub's comment limit.\n"
	}
	return c
}

func diffMaps(base, head map[string][]byte) []fleet.Change {
	var out []fleet.Change
	for p, nb := range head {
		ob, ok := base[p]
		switch {
		case !ok:
			out = append(out, fleet.Change{Path: p, Op: fleet.Add, New: nb})
		case string(ob) != string(nb):
			out = append(out, fleet.Change{Path: p, Op: fleet.Update, Old: ob, New: nb})
		}
	}
	for p, ob := range base {
		if _, ok := head[p]; !ok {
			out = append(out, fleet.Change{Path: p, Op: fleet.Delete, Old: ob})
		}
	}
	slices.SortFunc(out, func(a, b fleet.Change) int { return strings.Compare(a.Path, b.Path) })
	return out
}

func groupByApp(changes []fleet.Change, base, head map[string][]byte) []*appChange {
	inBase, inHead := map[string]bool{}, map[string]bool{}
	for p := range base {
		if k := layout.AppOf(p); k != "" {
			inBase[k] = true
		}
	}
	for p := range head {
		if k := layout.AppOf(p); k != "" {
			inHead[k] = true
		}
	}
	byKey := map[string]*appChange{}
	for _, ch := range changes {
		k := layout.AppOf(ch.Path)
		if k == "" {
			continue
		}
		a := byKey[k]
		if a == nil {
			status := "changed"
			switch {
			case !inBase[k]:
				status = "added"
			case !inHead[k]:
				status = "removed"
			}
			a = &appChange{key: k, status: status}
			byKey[k] = a
		}
		a.changes = append(a.changes, ch)
	}
	var out []*appChange
	for _, a := range byKey {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b *appChange) int { return strings.Compare(a.key, b.key) })
	return out
}

func writeSummary(b *strings.Builder, apps []*appChange, base, head map[string]object) {
	count := map[string]int{}
	for _, a := range apps {
		count[a.status]++
	}
	fmt.Fprintf(b, "**%d app(s) added, %d changed, %d removed.**\n\n", count["added"], count["changed"], count["removed"])
	b.WriteString("| app | status | files |\n|---|---|---|\n")
	for _, a := range apps {
		fmt.Fprintf(b, "| `%s` | %s | %d |\n", a.key, a.status, len(a.changes))
	}
	kinds := map[string][3]int{} // added, changed, removed
	for id, o := range head {
		bo, ok := base[id]
		k := kinds[o.Kind]
		switch {
		case !ok:
			k[0]++
		case !reflect.DeepEqual(bo.Obj, o.Obj):
			k[1]++
		}
		kinds[o.Kind] = k
	}
	for id, o := range base {
		if _, ok := head[id]; !ok {
			k := kinds[o.Kind]
			k[2]++
			kinds[o.Kind] = k
		}
	}
	var names []string
	for k, v := range kinds {
		if v != [3]int{} {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	if len(names) > 0 {
		b.WriteString("\n| kind | added | changed | removed |\n|---|---|---|---|\n")
		for _, k := range names {
			v := kinds[k]
			fmt.Fprintf(b, "| %s | %d | %d | %d |\n", k, v[0], v[1], v[2])
		}
	}
	b.WriteString("\n")
}

func containerImages(o object) map[string]string {
	out := map[string]string{}
	l, _ := get(o.Obj, "spec", "template", "spec", "containers").([]any)
	for _, c := range l {
		out[str(get(c, "name"))] = str(get(c, "image"))
	}
	return out
}

func writeImages(b *strings.Builder, base, head map[string]object) {
	type row struct{ what, old, new string }
	var rows []row
	ids := unionKeys(base, head)
	for _, id := range ids {
		bo, bok := base[id]
		ho, hok := head[id]
		if (bok && bo.Kind != "Deployment") || (hok && ho.Kind != "Deployment") {
			continue
		}
		oldI, newI := map[string]string{}, map[string]string{}
		if bok {
			oldI = containerImages(bo)
		}
		if hok {
			newI = containerImages(ho)
		}
		for _, name := range unionKeys(oldI, newI) {
			if oldI[name] != newI[name] {
				o := ho
				if !hok {
					o = bo
				}
				rows = append(rows, row{o.Namespace + "/" + o.Name + " (" + name + ")", orDash(oldI[name]), orDash(newI[name])})
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("### Images\n\n| workload | before | after |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| `%s` | `%s` | `%s` |\n", r.what, r.old, r.new)
	}
	b.WriteString("\n")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// requests returns the CPU and memory a Deployment reserves: its
// containers' requests times its replicas (the autoscaler's minimum when it
// sets none).
func requests(o object, all map[string]object) (cpu, mem resource.Quantity) {
	replicas := int64(1)
	if r, ok := get(o.Obj, "spec", "replicas").(float64); ok {
		replicas = int64(r)
	} else if h, ok := all["HorizontalPodAutoscaler/"+o.Namespace+"/"+o.Name]; ok {
		if m, ok := get(h.Obj, "spec", "minReplicas").(float64); ok {
			replicas = int64(m)
		}
	}
	l, _ := get(o.Obj, "spec", "template", "spec", "containers").([]any)
	for _, c := range l {
		if q, err := resource.ParseQuantity(fmt.Sprint(get(c, "resources", "requests", "cpu"))); err == nil {
			cpu.Add(q)
		}
		if q, err := resource.ParseQuantity(fmt.Sprint(get(c, "resources", "requests", "memory"))); err == nil {
			mem.Add(q)
		}
	}
	cpu.SetMilli(cpu.MilliValue() * replicas)
	mem.Set(mem.Value() * replicas)
	return cpu, mem
}

func writeResources(b *strings.Builder, base, head map[string]object) {
	type tot struct{ cpu, mem [2]resource.Quantity }
	perApp := map[string]*tot{}
	add := func(objs map[string]object, i int) {
		for _, o := range objs {
			if o.Kind != "Deployment" {
				continue
			}
			key := o.Namespace + "/" + labelOf(o, "fleetwright.io/app")
			t := perApp[key]
			if t == nil {
				t = &tot{}
				perApp[key] = t
			}
			c, m := requests(o, objs)
			t.cpu[i].Add(c)
			t.mem[i].Add(m)
		}
	}
	add(base, 0)
	add(head, 1)
	var keys []string
	var total tot
	for k, t := range perApp {
		if t.cpu[0].Cmp(t.cpu[1]) != 0 || t.mem[0].Cmp(t.mem[1]) != 0 {
			keys = append(keys, k)
			for i := range 2 {
				total.cpu[i].Add(t.cpu[i])
				total.mem[i].Add(t.mem[i])
			}
		}
	}
	if len(keys) == 0 {
		return
	}
	slices.Sort(keys)
	b.WriteString("### Resource requests (× replicas)\n\n| app | CPU | memory |\n|---|---|---|\n")
	row := func(name string, t *tot) {
		fmt.Fprintf(b, "| %s | %s → %s (%s) | %s → %s (%s) |\n", name,
			cpuStr(t.cpu[0]), cpuStr(t.cpu[1]), delta(t.cpu, cpuStr),
			memStr(t.mem[0]), memStr(t.mem[1]), delta(t.mem, memStr))
	}
	for _, k := range keys {
		row("`"+k+"`", perApp[k])
	}
	row("**total**", &total)
	b.WriteString("\n")
}

func cpuStr(q resource.Quantity) string { return fmt.Sprintf("%dm", q.MilliValue()) }

func memStr(q resource.Quantity) string { return fmt.Sprintf("%dMi", q.Value()/(1<<20)) }

func delta(q [2]resource.Quantity, f func(resource.Quantity) string) string {
	d := q[1].DeepCopy()
	d.Sub(q[0])
	if d.Sign() >= 0 {
		return "+" + f(d)
	}
	neg := d.DeepCopy()
	neg.Neg()
	return "-" + f(neg)
}

// unionKeys returns the keys of both maps, sorted.
func unionKeys[V any](a, b map[string]V) []string {
	set := make(map[string]bool, len(a)+len(b))
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// section is the collapsible diff of one file.
func section(ch fleet.Change, base, head map[string]object) string {
	title := ch.Path
	for _, objs := range []map[string]object{head, base} {
		for _, o := range objs {
			if o.File == ch.Path && !strings.Contains(string(ch.New)+string(ch.Old), "\n---\n") {
				title = o.label()
			}
		}
	}
	verb := map[fleet.Op]string{fleet.Add: "added", fleet.Update: "changed", fleet.Delete: "removed"}[ch.Op]
	d := fleet.FileDiff(ch, "")
	fence := "```"
	for strings.Contains(d, fence) {
		fence += "`"
	}
	return fmt.Sprintf("<details><summary>%s — %s <code>%s</code></summary>\n\n%sdiff\n%s%s\n\n</details>\n\n",
		verb, title, ch.Path, fence, d, fence)
}
