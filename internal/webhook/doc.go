// Package webhook is the server behind cmd/webhook. It receives Flux
// notification-controller events (providers generic and generic-hmac),
// stores each one durably before acknowledging it, keeps one deployment per
// app and fleet revision, probes every deployment (GitOps sync, workload
// readiness, HTTPS reachability and TLS) to move the app through its phases,
// and serves the status API, a server-sent event stream of phase changes,
// status pages for people (pages.go: server-rendered HTML that follows the
// stream), Prometheus metrics and, when configured, GitHub deployment
// statuses.
//
// Who sees what (access.go, session.go, oidc.go): people sign in with a
// token or through an OpenID Connect provider; their sessions live in the
// store's session list; every page, API read and stream shows only the
// projects a token or the access file grants them, and streams are bounded
// per person, token and address (limits.go).
//
// Several replicas (Config.Coordinator, store.Owners on PostgreSQL): every
// replica stores events and serves reads; only an app's owner runs its
// checks, writes its phase transitions (compare-and-set on the stored
// phase) and sends its GitHub states from the store's outbox. A replica
// tells the owner of another's app by NOTIFY, and a new owner resumes the
// apps it takes over.
//
// docs/webhook.md describes the endpoints and the phase rules.
package webhook
