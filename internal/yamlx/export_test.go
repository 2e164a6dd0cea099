package yamlx

// Dump is dump, for the tests of package yamlx_test.
var Dump = dump
