package validate

import "fmt"

// A strategic merge patch merges a Service's ports entry by entry,
// matching them by their merge keys, port and protocol. kustomize matches
// an entry without protocol to no port of the Service and drops it without
// a word (Service ports always carry one: render writes TCP by default), so
// the patch changes nothing. A container's ports, matched by containerPort,
// do not need it.

// mergeKeyProblem says where a strategic merge patch of kind holds a
// Service ports entry without protocol, or "".
func mergeKeyProblem(kind string, patch map[string]any) string {
	if kind != "Service" {
		return ""
	}
	spec, _ := patch["spec"].(map[string]any)
	list, _ := spec["ports"].([]any)
	for i, p := range list {
		pm, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if _, has := pm["protocol"]; !has {
			return fmt.Sprintf("spec.ports[%d] has no protocol: kustomize merges a Service's ports by port and protocol, so this entry matches no port and is dropped without a word; add protocol: TCP (or UDP, SCTP)", i)
		}
	}
	return ""
}
