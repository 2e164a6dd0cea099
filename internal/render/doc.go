// Package render is the pipeline that turns an apps repository into a
// fleet: load the specs from a Source (a folder, or a Git ref), validate
// them, order their components, resolve each workload's image through an
// ImageSource (build and pin, content tags, or the images of an existing
// fleet), and generate the fleet's files.
//
// Load, Render and Run return values (the problems, the generated fleet, a
// Summary) for the command to print; Review renders two revisions and
// builds the pull request comment. Nothing here writes to stdout or
// stderr: logs go to the injected *slog.Logger and progress of long work
// (image builds, generation) to the injected Progress.
package render
