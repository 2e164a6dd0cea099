// Package probe checks whether an app's deployment is real: in order,
//
//  1. GitOps sync: every Flux Kustomization of the app is Ready and has
//     applied the deployment's revision, as has the Kustomization that
//     applies them; their spec-revision annotation then names the apps-repo
//     commit of the revision. A Kustomization that reads its own
//     OCIRepository (fleet.artifacts) reports the artifact's revision
//     (sha256:<hex>) instead: it is judged against the digest the revision
//     pins, once source-controller stored that artifact (artifact.go).
//     No Kustomization left means the app is gone;
//  2. workload readiness: every Deployment and StatefulSet of the app is
//     current by kstatus rules (observed generation, updated and available
//     replicas, a StatefulSet's update revision);
//  3. reachability and TLS: an HTTPS GET to every host of the app's Ingress
//     objects answers below 500, over a chain that verifies for the host,
//     with the certificate's days to expiry recorded.
//
// A Runner runs the three checks in that order with backoff and bounded
// concurrency until the app's timeout. The Kubernetes reads go through a
// controller-runtime client.Reader, the HTTPS requests through an injected
// dialer, and time through an injected Clock, so tests drive all three.
package probe
