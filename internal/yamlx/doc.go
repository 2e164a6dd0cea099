// Package yamlx reads YAML for the whole product: app specs, fleet files
// and kustomizations. It has one positioned node type (Node), one fast
// reader of the plain subset of YAML that render and people write nearly
// every file in (Fast), and one fallback on yaml.v3 for everything else
// (Full). Parse tries the first and falls back to the second; the two agree
// on every input the fast reader accepts, positions included (FuzzParse).
//
// Values follow yaml.v3's YAML 1.2 reading and take the shape JSON gives
// them: map keys are strings, numbers keep their canonical JSON text,
// aliases and merge keys (<<) are expanded.
package yamlx
