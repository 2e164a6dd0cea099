package spec

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/invopop/jsonschema"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Quantity is a Kubernetes resource quantity written as a string ("100m",
// "128Mi") or a plain number (1, 0.5).
type Quantity struct {
	s string
}

// None, written in place of a quantity, removes a default: the platform's
// (or the project's) request or limit does not apply.
const None = "none"

// IsNone reports whether the quantity is None.
func (q Quantity) IsNone() bool { return q.s == None }

// NewQuantity returns the quantity written as s.
func NewQuantity(s string) *Quantity { return &Quantity{s: s} }

// String returns the quantity as written.
func (q Quantity) String() string { return q.s }

// Parse returns the parsed Kubernetes quantity.
func (q Quantity) Parse() (resource.Quantity, error) { return resource.ParseQuantity(q.s) }

// UnmarshalJSON accepts a JSON string or number.
func (q *Quantity) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &q.s)
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("quantity must be a string or a number")
	}
	q.s = n.String()
	return nil
}

// MarshalJSON writes the quantity as a string.
func (q Quantity) MarshalJSON() ([]byte, error) { return json.Marshal(q.s) }

// JSONSchema describes a quantity for the generated schema.
func (Quantity) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		OneOf: []*jsonschema.Schema{
			// none removes the platform's (or the project's) default.
			{Type: "string", Pattern: `^([+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|e[0-9]+)?|none)$`},
			{Type: "number", Minimum: json.Number("0")},
		},
		Examples: []any{"100m", "128Mi", 0.5, None},
	}
}

// UnmarshalString sets the value to s as written, as UnmarshalJSON of
// a JSON string does; the spec loader decodes strings through it.
func (q *Quantity) UnmarshalString(s string) { q.s = s }
