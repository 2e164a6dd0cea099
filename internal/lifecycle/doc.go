// Package lifecycle edits the specs of an apps repository the way the
// lifecycle commands of render do: New adds an app, Pause and Resume set
// and remove paused, Scale changes replicas or autoscaling bounds, Delete
// removes an app's folder, Rollback restores an app's folder as it was at
// an older commit (or at a deployment the webhook recorded), and
// CaptureTemplate turns an app's components into a stack template.
//
// Each of them reads the repository, edits the spec text with
// package specedit (comments and layout stay), validates the result with
// the spec loader and returns a Change: the files to write and remove and
// the commit message. Nothing is written until the Change is given to
// Apply, which leaves it in the work tree or commits it through package
// gitrepo; Change.Diff shows it as a unified diff instead. History lists
// the commits that changed an app's spec and, with a DeploymentLister such
// as api.Client (WebhookDeployments), the deployments of each;
// History.WriteText and its JSON are what render history prints.
//
// The environment comes in through Options (Getenv, Now, Logger); the
// package prints nothing but what it is handed a writer for. Warnings, such as a template that changed since
// the revision a rollback restores, are logged at level Warn.
package lifecycle
