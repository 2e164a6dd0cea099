// Package template reads stack templates and expands them into app
// components.
//
// A stack template is a file templates/<name>/template.yaml (or .yml, or
// .json) in the apps repository:
//
//	name: web-with-db
//	version: 1.2.0
//	description: A web service and its PostgreSQL database.
//	parameters:
//	  - name: image
//	    type: string
//	    required: true
//	  - name: replicas
//	    type: integer
//	    default: 2
//	    minimum: 1
//	components:
//	  - name: web
//	    type: workload
//	    workload_spec:
//	      image: ${{ params.image }}
//	      replicas: ${{ params.replicas }}
//
// Parameters are typed (string, integer, boolean, number) and checked with
// a JSON Schema built from their list; each is either required or has a
// default. Placeholders are written ${{ params.NAME }}: the "$" and double
// braces cannot be mistaken for Kubernetes' $(VAR) expansion or for Helm's
// {{ }}, and "$${{" writes a literal "${{". A placeholder that is the whole
// value (quoted or not) takes the parameter's type, so replicas above is a
// number; a placeholder inside a longer string is replaced by the value's
// text. Placeholders go in values only, never in keys.
//
// Expand returns the components as YAML nodes that keep the template
// file's lines and columns, and tells which values came from which
// parameters, so problems can point at the template line or at the app's
// parameter. Capture goes the other way: it turns an app's components into
// a template, replacing the values it is told to with placeholders and
// copying every other byte.
package template
