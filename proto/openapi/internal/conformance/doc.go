// Package conformance holds the tests of the documents package openapi serves: valid OpenAPI
// 3.0 by kin-openapi's validator, one operation per gateway route, security, error answers,
// required fields, enums, ranges and shapes. They live apart from package openapi so that the
// validator is not a test dependency of every module that serves the documents.
package conformance
