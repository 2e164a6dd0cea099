// Package verify checks a fleet folder the way Flux will see it, for the
// verify command: it re-renders the specs and compares (drift), builds every
// Flux Kustomization's path as kustomize-controller does, checks every
// object against its Go API type (client-go's kinds and Flux's) and the API
// server's rules for workloads, Services, claims, disruption budgets and
// ConfigMaps, gates plain-text secrets (config files and patches included),
// evaluates pods against the Pod Security Standard their namespace
// enforces, applies the platform's policy, rebuilds the artifacts the fleet
// pins (components' and, with a source per project, projects') and checks
// the move of the apps' Flux objects to their project's source, and, with
// a cluster,
// server-side dry-runs every object and reports live drift field by field.
//
// Run does the work and returns a Report of Findings, each pointing into the
// fleet:
//
//	fleet/apps/prod/shop/orders/api/deployment-orders-api.yaml:43: Deployment/orders-api: spec.template.spec.containers[0].imagePullPolicyy: unknown field
//
// Writer prints a report as text, JSON, or GitHub annotations. No finding
// ever holds a secret's value.
//
// A fleet of 10,000 apps is verified in about ten seconds on two cores: the
// files are read once, render's own output is parsed by a line parser for
// the YAML subset render writes (yaml.v3 reads anything else), plain paths
// are assembled without kustomize (with kustomize's result, which tests
// check), and objects are validated by walking them against their types.
// See docs/verify.md.
package verify
