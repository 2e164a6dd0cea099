package validate

import (
	"fmt"
	"regexp"
	"strings"
)

// The image rules of platform.yaml's policy settings that hold for an
// image as the spec writes it as much as for the fleet's: validation
// applies them to workload images, verify to every container's.

var digestRef = regexp.MustCompile(`@[a-z0-9]+([+._-][a-z0-9]+)*:[a-fA-F0-9]{32,}$`)

// PinnedByDigest reports whether image names its digest.
func PinnedByDigest(image string) bool { return digestRef.MatchString(image) }

// SplitTag splits an image reference without digest into name and tag.
func SplitTag(ref string) (name, tag string) {
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

// UsesLatestTag reports whether image breaks the forbid_latest policy: it
// is not pinned by digest and has no tag or the tag latest.
func UsesLatestTag(image string) bool {
	if PinnedByDigest(image) {
		return false
	}
	_, tag := SplitTag(image)
	return tag == "" || tag == "latest"
}

// ForbidLatestMessage is the problem an image that UsesLatestTag gets.
func ForbidLatestMessage(image string) string {
	return fmt.Sprintf("image %s uses the mutable latest tag; pin a version (policy forbid_latest)", image)
}
