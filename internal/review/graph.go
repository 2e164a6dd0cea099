package review

import (
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// writeGraphs draws each added or changed app's components as a Mermaid
// flowchart: an arrow from what is needed to what needs it, solid for
// depends_on, dotted and labelled for export wiring; addons as cylinders,
// jobs and cron jobs (with their schedule) as parallelograms.
func writeGraphs(b *strings.Builder, apps []*appChange, repo *load.Repo) {
	if repo == nil {
		return
	}
	var out strings.Builder
	for _, ac := range apps {
		if ac.status == "removed" {
			continue
		}
		k, err := layout.ParseKey(ac.key)
		if err != nil {
			continue
		}
		a := repo.App(k.Cluster, k.Project, k.Name)
		if a == nil {
			continue
		}
		fmt.Fprintf(&out, "<details open><summary>graph of <code>%s</code></summary>\n\n```mermaid\nflowchart LR\n", html(ac.key))
		id := func(app, comp string) string {
			if app == a.Spec.Name {
				return "c_" + strings.ReplaceAll(comp, "-", "_")
			}
			return "x_" + strings.ReplaceAll(app+"__"+comp, "-", "_")
		}
		for _, c := range a.Spec.Components {
			shape := "[%s]"
			label := mermaid(c.Name)
			switch c.Type {
			case spec.TypeAddon:
				shape = "[(%s)]"
			case spec.TypeJob:
				shape = "[/%s/]" // runs once; dependents wait for it
				label += "<br/>job"
			case spec.TypeCronJob:
				shape = "[/%s/]"
				label += "<br/>cronjob"
				if c.WorkloadSpec != nil && c.WorkloadSpec.Schedule != "" {
					label += " " + mermaid(c.WorkloadSpec.Schedule)
				}
			}
			if c.AddonSpec != nil {
				label += "<br/>" + mermaid(c.AddonSpec.Type)
			}
			fmt.Fprintf(&out, "  %s"+shape+"\n", id(a.Spec.Name, c.Name), "\""+label+"\"")
		}
		for _, c := range a.Spec.Components {
			for _, d := range c.DependsOn {
				fmt.Fprintf(&out, "  %s --> %s\n", id(a.Spec.Name, d), id(a.Spec.Name, c.Name))
			}
			if c.WorkloadSpec == nil {
				continue
			}
			for _, e := range a.Spec.WorkloadEnv(c.WorkloadSpec) {
				r := e.ExportRef
				if r == nil || r.Component == "" {
					continue
				}
				app := a.Spec.Name
				if r.App != "" {
					app = r.App
				}
				from := id(app, r.Component)
				if app != a.Spec.Name {
					fmt.Fprintf(&out, "  %s[\"%s\"]\n", from, mermaid(app+"/"+r.Component))
				}
				fmt.Fprintf(&out, "  %s -. \"%s\" .-> %s\n", from, mermaid(r.ExportKey+" → "+e.Name), id(a.Spec.Name, c.Name))
			}
		}
		out.WriteString("```\n\n</details>\n\n")
	}
	if out.Len() > 0 {
		b.WriteString("### Dependency graphs\n\n")
		b.WriteString(out.String())
	}
}

// mermaidEscaper keeps a label inside its quotes and its text as text:
// Mermaid reads #name; and #number; as entities.
var mermaidEscaper = strings.NewReplacer(`"`, "'", "#", "#35;", "<", "#lt;", ">", "#gt;", "`", "#96;")

// mermaid is a value as the text of a node's or an arrow's label, on one
// line (a line of backticks would close the diagram's fence).
func mermaid(s string) string { return mermaidEscaper.Replace(fold(s)) }
