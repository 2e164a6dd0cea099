package diag

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/fleetwright/fleetwright/internal/hint"
)

// SchemaError is one failure of a JSON Schema validation, in words.
type SchemaError struct {
	// Path is where in the instance the failure is, as JSON Pointer tokens
	// (array indexes in decimal).
	Path []string
	// Name is the property a Required or AdditionalProperties failure is
	// about: they give one SchemaError per property.
	Name string
	// Kind is the failed keyword; nil when the error was not a
	// validation error.
	Kind jsonschema.ErrorKind
	// SchemaURL is the failed keyword's location in the schema.
	SchemaURL string
	// Message says what is wrong, in the words of the spec files; callers
	// may say it in their own for some kinds.
	Message string
}

// Schema turns the error of a jsonschema Validate into its leaf failures,
// in the order jsonschema reports them. A oneOf none of whose branches
// matched is one failure: the branches' own failures would contradict each
// other.
func Schema(err error) []SchemaError {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []SchemaError{{Message: err.Error()}}
	}
	var out []SchemaError
	leaves(ve, &out)
	return out
}

func leaves(ve *jsonschema.ValidationError, out *[]SchemaError) {
	if k, ok := ve.ErrorKind.(*kind.OneOf); (!ok || k.Subschemas != nil) && len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			leaves(c, out)
		}
		return
	}
	e := SchemaError{Path: ve.InstanceLocation, Kind: ve.ErrorKind, SchemaURL: ve.SchemaURL}
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, name := range k.Missing {
			e.Name, e.Message = name, fmt.Sprintf("missing required field %q", name)
			*out = append(*out, e)
		}
		return
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			e.Name, e.Message = name, fmt.Sprintf("unknown field %q", name)
			*out = append(*out, e)
		}
		return
	case *kind.Type:
		e.Message = fmt.Sprintf("must be %s, not %s", hint.TypeName(strings.Join(k.Want, " or ")), hint.TypeName(k.Got))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		e.Message = fmt.Sprintf("must be one of %s; got %s", strings.Join(want, ", "), Display(k.Got))
	case *kind.Minimum:
		e.Message = fmt.Sprintf("must be ≥ %s; got %s", hint.Number(k.Want), hint.Number(k.Got))
	case *kind.Maximum:
		e.Message = fmt.Sprintf("must be ≤ %s; got %s", hint.Number(k.Want), hint.Number(k.Got))
	case *kind.MinLength:
		if k.Want == 1 {
			e.Message = "must not be empty"
		} else {
			e.Message = fmt.Sprintf("must be at least %d characters long", k.Want)
		}
	case *kind.MaxLength:
		e.Message = fmt.Sprintf("must be at most %d characters long; got %d", k.Want, k.Got)
	case *kind.MinItems:
		e.Message = fmt.Sprintf("must have at least %d items", k.Want)
	case *kind.Pattern:
		e.Message = fmt.Sprintf("%q does not match %s", k.Got, k.Want)
	default:
		e.Message = ve.ErrorKind.LocalizedString(message.NewPrinter(language.English))
	}
	*out = append(*out, e)
}

// Display shows a value of a document as its JSON, nothing as "nothing".
func Display(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case nil:
		return "nothing"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
