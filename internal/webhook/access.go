package webhook

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// role is what a visitor may do with a project's pages. The pages change
// nothing: an operator sees what a viewer sees and, in an app's history,
// the rollback command of each past deployment.
type role int

const (
	roleNone role = iota
	roleViewer
	roleOperator
	// roleAdmin is the API token's: every project, as an operator.
	roleAdmin
)

func (r role) String() string {
	switch r {
	case roleAdmin:
		return "admin"
	case roleOperator:
		return "operator"
	case roleViewer:
		return "viewer"
	}
	return "none"
}

func parseRole(s string) (role, bool) {
	switch s {
	case "", "viewer":
		return roleViewer, true
	case "operator":
		return roleOperator, true
	}
	return roleNone, false
}

// allProjects is the project name that stands for every project.
const allProjects = "*"

// grant is what one visitor may see: a role per project, and a role on
// every project (all).
type grant struct {
	all      role
	projects map[string]role
}

// fullGrant is the API token's.
var fullGrant = grant{all: roleAdmin}

// roleOn returns the visitor's role on project.
func (g grant) roleOn(project string) role { return max(g.all, g.projects[project]) }

// allows reports whether the visitor may see project.
func (g grant) allows(project string) bool { return g.roleOn(project) != roleNone }

// empty reports whether the grant opens no project.
func (g grant) empty() bool { return g.all == roleNone && len(g.projects) == 0 }

// top is the highest role the grant holds anywhere, as the pages' header
// shows it.
func (g grant) top() role {
	r := g.all
	for _, p := range g.projects {
		r = max(r, p)
	}
	return r
}

// add grants r on projects ("*" for all).
func (g *grant) add(projects []string, r role) {
	for _, p := range projects {
		if p == allProjects {
			g.all = max(g.all, r)
			continue
		}
		if g.projects == nil {
			g.projects = map[string]role{}
		}
		g.projects[p] = max(g.projects[p], r)
	}
}

// AccessRule grants a role on projects to the people one OIDC claim
// names: exactly one of Group, Email and Subject is set.
type AccessRule struct {
	Group   string
	Email   string
	Subject string
	// Projects are the projects granted; "*" is every project.
	Projects []string
	// Role is "viewer" (the default) or "operator".
	Role string
	// Where is the rule's place in its file ("access.yaml:7:5").
	Where string
}

// Access maps OIDC groups and users to projects and roles. A person gets
// the union of every rule that names them (their sub, their verified
// email, or one of their groups).
type Access struct {
	Rules []AccessRule
}

// grantFor returns what a person with these claims may see.
func (a *Access) grantFor(subject, email string, groups []string) grant {
	var g grant
	if a == nil {
		return g
	}
	for _, r := range a.Rules {
		match := (r.Subject != "" && r.Subject == subject) ||
			(r.Email != "" && email != "" && strings.EqualFold(r.Email, email)) ||
			(r.Group != "" && slices.Contains(groups, r.Group))
		if !match {
			continue
		}
		ro, _ := parseRole(r.Role)
		g.add(r.Projects, ro)
	}
	return g
}

// maxAccessFile bounds the access file.
const maxAccessFile = 1 << 20

// ParseAccess reads an access file (docs/webhook.md, "Who sees what"):
//
//	rules:
//	  - group: team-shop
//	    projects: [shop]
//	  - email: lead@example.com
//	    projects: ["*"]
//	    role: operator
//
// Errors name the file, line, column and field.
func ParseAccess(name string, data []byte) (*Access, error) {
	if len(data) > maxAccessFile {
		return nil, fmt.Errorf("%s: the access file is larger than %d bytes", name, maxAccessFile)
	}
	docs, err := yamlx.Parse(data)
	if err != nil {
		if ye, ok := errors.AsType[*yamlx.Error](err); ok {
			return nil, fmt.Errorf("%s:%d:%d: %s", name, ye.Line, max(ye.Col, 1), ye.Msg)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(docs) != 1 || docs[0].Root == nil {
		return nil, fmt.Errorf("%s:1:1: the access file must hold one document with a rules list", name)
	}
	at := func(n *yamlx.Node, field, msg string, args ...any) error {
		return fmt.Errorf("%s:%d:%d: %s: %s", name, n.Line, n.Col, field, fmt.Sprintf(msg, args...))
	}
	root := docs[0].Root
	if root.Kind != yamlx.MapNode {
		return nil, at(root, "(root)", "must be a mapping with a rules list")
	}
	for i := 0; i < len(root.Kids); i += 2 {
		if k := root.Kids[i]; k.Str != "rules" {
			return nil, at(k, k.Str, "unknown field (the file holds rules)")
		}
	}
	rules := root.Get("rules")
	if rules == nil || rules.Kind != yamlx.SeqNode {
		n := root
		if rules != nil {
			n = rules
		}
		return nil, at(n, "rules", "must be a list of rules")
	}
	a := &Access{}
	for i, rn := range rules.Kids {
		field := fmt.Sprintf("rules[%d]", i)
		if rn.Kind != yamlx.MapNode {
			return nil, at(rn, field, "must be a mapping (group, email or subject; projects; role)")
		}
		r := AccessRule{Where: fmt.Sprintf("%s:%d:%d", name, rn.Line, rn.Col)}
		var who []string
		for j := 0; j < len(rn.Kids); j += 2 {
			k, v := rn.Kids[j], rn.Kids[j+1]
			f := field + "." + k.Str
			switch k.Str {
			case "group", "email", "subject", "role":
				if v.Kind != yamlx.ScalarNode || v.Tag != yamlx.StrTag || strings.TrimSpace(v.Str) == "" {
					return nil, at(v, f, "must be a non-empty string")
				}
				switch k.Str {
				case "group":
					r.Group = v.Str
				case "email":
					if !strings.Contains(v.Str, "@") {
						return nil, at(v, f, "%q is not an email address", v.Str)
					}
					r.Email = v.Str
				case "subject":
					r.Subject = v.Str
				case "role":
					if _, ok := parseRole(v.Str); !ok {
						return nil, at(v, f, "must be viewer or operator, not %q", v.Str)
					}
					r.Role = v.Str
				}
				if k.Str != "role" {
					who = append(who, k.Str)
				}
			case "projects":
				if v.Kind != yamlx.SeqNode || len(v.Kids) == 0 {
					return nil, at(v, f, "must be a non-empty list of project names (\"*\" for every project)")
				}
				for pi, pn := range v.Kids {
					if pn.Kind != yamlx.ScalarNode || pn.Tag != yamlx.StrTag || !validProject(pn.Str) {
						return nil, at(pn, fmt.Sprintf("%s[%d]", f, pi), "must be a project name (a DNS label) or \"*\"")
					}
					r.Projects = append(r.Projects, pn.Str)
				}
			default:
				return nil, at(k, f, "unknown field (group, email, subject, projects, role)")
			}
		}
		switch {
		case len(who) == 0:
			return nil, at(rn, field, "names nobody: set one of group, email and subject")
		case len(who) > 1:
			return nil, at(rn, field, "sets %s: set exactly one of group, email and subject", strings.Join(who, " and "))
		case r.Projects == nil:
			return nil, at(rn, field+".projects", "is required")
		}
		a.Rules = append(a.Rules, r)
	}
	return a, nil
}

// validProject reports whether p is "*" or a DNS label, as project names are.
func validProject(p string) bool {
	if p == allProjects {
		return true
	}
	if p == "" || len(p) > 63 || p[0] == '-' || p[len(p)-1] == '-' {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ViewerToken is a token that signs in to the status pages, and reads the
// API, for its projects only.
type ViewerToken struct {
	Token string
	// Projects are the projects it opens; "*" is every project.
	Projects []string
}

// ParseViewerTokens reads a viewer token file: one token a line, followed
// by the comma-separated projects it opens ("*" for all); a line with a
// token alone (the format of a one-token file) opens every project. Blank
// lines and lines starting with # are skipped. Errors name the line, never
// the token.
func ParseViewerTokens(name string, data []byte) ([]ViewerToken, error) {
	var out []ViewerToken
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) > 2 {
			return nil, fmt.Errorf("%s:%d: a line holds a token and its projects (a,b,c), nothing more", name, ln)
		}
		if prev, ok := seen[f[0]]; ok {
			return nil, fmt.Errorf("%s:%d: the token of line %d again", name, ln, prev)
		}
		seen[f[0]] = ln
		vt := ViewerToken{Token: f[0], Projects: []string{allProjects}}
		if len(f) == 2 {
			vt.Projects = nil
			for p := range strings.SplitSeq(f[1], ",") {
				if !validProject(p) {
					return nil, fmt.Errorf("%s:%d: %q is not a project name (a DNS label) or \"*\"", name, ln, p)
				}
				vt.Projects = append(vt.Projects, p)
			}
		}
		out = append(out, vt)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no token", name)
	}
	return out, nil
}

// String lists a grant's projects and roles, for a log line.
func (g grant) String() string {
	if g.all != roleNone {
		return "*:" + g.all.String()
	}
	var b strings.Builder
	for i, p := range slices.Sorted(maps.Keys(g.projects)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p + ":" + g.projects[p].String())
	}
	return b.String()
}
