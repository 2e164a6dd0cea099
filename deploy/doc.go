// Package deploy holds what a platform team applies to a cluster, in the
// order docs/install.md gives: flux (Flux's multi-tenancy lockdown),
// webhook (the webhook, with the components ingress and oidc) and
// notifications (Flux's events to the webhook, the fleet's push
// Receiver). Its test follows docs/install.md.
package deploy
