package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
)

// Exception types of the error body. On gRPC they travel as a google.rpc.ErrorInfo detail whose
// Reason is the UPPER_SNAKE_CASE form (AIP-193: VALIDATION_ERROR, NOT_AUTHENTICATED, ...) and whose
// metadata carries the exceptionType itself, so both fronts say the same thing.
const (
	ExceptionValidation       = "ValidationError"
	ExceptionNotAuthenticated = "NotAuthenticated"
	ExceptionPermissionDenied = "PermissionDenied"
	ExceptionNotFound         = "NotFound"
	ExceptionMethodNotAllowed = "MethodNotAllowed"
	ExceptionTooLarge         = "RequestTooLarge"
	ExceptionUnsupportedType  = "UnsupportedMediaType"
	ExceptionThrottled        = "Throttled"
	ExceptionTimeout          = "RequestTimeout"
	ExceptionAPI              = "APIException"
)

const (
	errorDomain      = "yardstick"
	msgInvalid       = "Invalid input."
	infoValidation   = "See validationErrors for every problem found."
	infoKey          = "additionalInfo"
	exceptionKey     = "exceptionType"
	nonFieldErrorKey = "nonFieldErrors"
)

// ErrorBody is the JSON body of every non-2xx answer of the HTTP front.
type ErrorBody struct {
	Message          string              `json:"message"`
	ExceptionType    string              `json:"exceptionType"`
	AdditionalInfo   string              `json:"additionalInfo"`
	ValidationErrors map[string][]string `json:"validationErrors,omitempty"`
}

// reasons are the ErrorInfo reasons of the exception types.
var reasons = map[string]string{
	ExceptionValidation:       "VALIDATION_ERROR",
	ExceptionNotAuthenticated: "NOT_AUTHENTICATED",
	ExceptionPermissionDenied: "PERMISSION_DENIED",
	ExceptionNotFound:         "NOT_FOUND",
	ExceptionMethodNotAllowed: "METHOD_NOT_ALLOWED",
	ExceptionTooLarge:         "REQUEST_TOO_LARGE",
	ExceptionUnsupportedType:  "UNSUPPORTED_MEDIA_TYPE",
	ExceptionThrottled:        "THROTTLED",
	ExceptionTimeout:          "REQUEST_TIMEOUT",
	ExceptionAPI:              "API_EXCEPTION",
}

// errorInfo is the ErrorInfo detail of an exception type.
func errorInfo(exception, info string) *errdetails.ErrorInfo {
	return &errdetails.ErrorInfo{
		Reason: reasons[exception], Domain: errorDomain,
		Metadata: map[string]string{exceptionKey: exception, infoKey: info},
	}
}

// statusError builds a gRPC status carrying the exception type and the additional info.
func statusError(code codes.Code, exception, message, info string, extra ...protoadapt.MessageV1) error {
	details := append([]protoadapt.MessageV1{errorInfo(exception, info)}, extra...)
	withDetails, err := status.New(code, message).WithDetails(details...)
	if err != nil {
		return status.Error(code, message)
	}
	return withDetails.Err()
}

// NotAuthenticated is the answer for credentials or a token that cannot be verified.
func NotAuthenticated(message, info string) error {
	return statusError(codes.Unauthenticated, ExceptionNotAuthenticated, message, info)
}

// PermissionDenied is the answer for a client or token without the needed permission.
func PermissionDenied(message, info string) error {
	return statusError(codes.PermissionDenied, ExceptionPermissionDenied, message, info)
}

// Throttled is the answer when failed attempts exhausted a client's or an address's budget.
func Throttled(retryAfter time.Duration) error {
	secs := int64(math.Ceil(retryAfter.Seconds()))
	if secs < 1 {
		secs = 1
	}
	return statusError(codes.ResourceExhausted, ExceptionThrottled, "Too many failed attempts.",
		fmt.Sprintf("Retry after %d seconds.", secs),
		&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(secs) * time.Second)})
}

// Internal is the answer for a fault of ours; the cause is logged, never sent.
func Internal() error {
	return statusError(codes.Internal, ExceptionAPI, "Internal error.", "The request could not be completed; it has been logged.")
}

// httpError is what an error becomes on the HTTP front.
type httpError struct {
	status     int
	body       ErrorBody
	retryAfter int64 // seconds; 0 = no Retry-After header
}

// fromStatus turns any error of the gRPC side into the HTTP status and body.
func fromStatus(err error) httpError {
	var hse *runtime.HTTPStatusError
	if errors.As(err, &hse) {
		return httpError{status: hse.HTTPStatus, body: bodyForHTTP(hse.HTTPStatus, hse.Err)}
	}
	st := status.Convert(err)
	out := httpError{body: ErrorBody{Message: st.Message()}}
	var info *errdetails.ErrorInfo
	var bad *errdetails.BadRequest
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
		case *errdetails.BadRequest:
			bad = d
		case *errdetails.RetryInfo:
			out.retryAfter = int64(math.Ceil(d.GetRetryDelay().AsDuration().Seconds()))
		}
	}
	if info != nil && info.Domain == errorDomain {
		out.body.ExceptionType = info.Metadata[exceptionKey]
		out.body.AdditionalInfo = info.Metadata[infoKey]
	}
	switch st.Code() {
	case codes.InvalidArgument:
		out.status = http.StatusBadRequest
		out.body.ExceptionType = ExceptionValidation
		out.body.ValidationErrors = validationErrors(bad, st.Message())
		out.body.Message = msgInvalid
		if out.body.AdditionalInfo == "" {
			out.body.AdditionalInfo = infoValidation
		}
	case codes.Unauthenticated:
		out.status = http.StatusUnauthorized
		out.body.ExceptionType = ExceptionNotAuthenticated
	case codes.PermissionDenied:
		out.status = http.StatusForbidden
		out.body.ExceptionType = ExceptionPermissionDenied
	case codes.NotFound:
		out.status = http.StatusNotFound
		out.body.ExceptionType = ExceptionNotFound
	case codes.ResourceExhausted:
		switch {
		case out.body.ExceptionType == ExceptionThrottled:
			out.status = http.StatusTooManyRequests
		case info != nil && info.Domain == errorDomain && info.Reason == reasonOverloaded:
			// The memory budget is full (budget.go): the request is fine, the moment is not.
			out.status = http.StatusServiceUnavailable
		default:
			// gRPC's own message-size limit speaks ResourceExhausted too.
			out.status = http.StatusRequestEntityTooLarge
			out.body = ErrorBody{Message: "Request too large.", ExceptionType: ExceptionTooLarge, AdditionalInfo: "The request exceeds the size limit."}
		}
	case codes.Unavailable, codes.Canceled, codes.DeadlineExceeded:
		out.status = http.StatusServiceUnavailable
		out.body = ErrorBody{Message: "Service unavailable.", ExceptionType: ExceptionAPI, AdditionalInfo: "The service is not ready or is shutting down; retry shortly."}
	default:
		out.status = http.StatusInternalServerError
		out.body = ErrorBody{Message: "Internal error.", ExceptionType: ExceptionAPI, AdditionalInfo: "The request could not be completed; it has been logged."}
	}
	return out
}

// bodyForHTTP is the body of an error that arises on the HTTP front itself.
func bodyForHTTP(code int, cause error) ErrorBody {
	switch code {
	case http.StatusBadRequest:
		msg := "Malformed request."
		if cause != nil {
			msg = cause.Error()
		}
		return ErrorBody{Message: msgInvalid, ExceptionType: ExceptionValidation, AdditionalInfo: infoValidation,
			ValidationErrors: map[string][]string{nonFieldErrorKey: {msg}}}
	case http.StatusNotFound:
		return ErrorBody{Message: "Not found.", ExceptionType: ExceptionNotFound, AdditionalInfo: "No endpoint has this path; see /openapi.json."}
	case http.StatusMethodNotAllowed:
		return ErrorBody{Message: "Method not allowed.", ExceptionType: ExceptionMethodNotAllowed, AdditionalInfo: "Endpoints take POST with a JSON body."}
	case http.StatusRequestTimeout:
		return ErrorBody{Message: "Request timeout.", ExceptionType: ExceptionTimeout, AdditionalInfo: "The request body arrived too slowly (see the minimum body rate)."}
	case http.StatusRequestEntityTooLarge:
		return ErrorBody{Message: "Request too large.", ExceptionType: ExceptionTooLarge, AdditionalInfo: "The request body exceeds the size limit."}
	case http.StatusUnsupportedMediaType:
		return ErrorBody{Message: "Unsupported media type.", ExceptionType: ExceptionUnsupportedType, AdditionalInfo: "Send Content-Type: application/json."}
	case http.StatusServiceUnavailable:
		return ErrorBody{Message: "Service unavailable.", ExceptionType: ExceptionAPI, AdditionalInfo: "The service is not ready or is shutting down; retry shortly."}
	default:
		return ErrorBody{Message: "Internal error.", ExceptionType: ExceptionAPI, AdditionalInfo: "The request could not be completed; it has been logged."}
	}
}

// validationErrors keys every problem as the original API does: by the request's top-level field
// (`items`, `priorAbility`), rules across fields under nonFieldErrors. A problem of an element
// (`items[3].result`) names its element path at the start of the message.
func validationErrors(bad *errdetails.BadRequest, message string) map[string][]string {
	out := map[string][]string{}
	for _, v := range bad.GetFieldViolations() {
		key, desc := topLevel(v.GetField()), v.GetDescription()
		if v.GetField() != "" && key != v.GetField() {
			desc = v.GetField() + ": " + desc
		}
		out[key] = append(out[key], desc)
	}
	if len(out) == 0 && message != "" && message != msgInvalid {
		// An InvalidArgument without field details (a gRPC library's own): its message is all
		// there is to say.
		out[nonFieldErrorKey] = []string{message}
	}
	return out
}

// topLevel is the top-level field of an element path: items[3].result → items, "" →
// nonFieldErrors.
func topLevel(path string) string {
	if path == "" {
		return nonFieldErrorKey
	}
	if i := strings.IndexAny(path, ".["); i > 0 {
		return path[:i]
	}
	return path
}

// writeHTTPError writes e as the documented error body.
func writeHTTPError(w http.ResponseWriter, e httpError) {
	h := w.Header()
	h.Del("Grpc-Metadata-Content-Type")
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if e.retryAfter > 0 {
		h.Set("Retry-After", strconv.FormatInt(e.retryAfter, 10))
	}
	if e.status == http.StatusUnauthorized && h.Get("WWW-Authenticate") == "" {
		// RFC 6750 §3: a 401 names the scheme the caller should use.
		h.Set("WWW-Authenticate", `Bearer realm="yardstick"`)
	}
	if e.status == http.StatusMethodNotAllowed && h.Get("Allow") == "" {
		h.Set("Allow", http.MethodPost)
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false) // "<accessToken>" reads as written; this is not HTML
	_ = enc.Encode(e.body)   // a struct of strings: cannot fail
	w.WriteHeader(e.status)
	_, _ = w.Write(bytes.TrimSuffix(body.Bytes(), []byte("\n")))
}

// writeHTTPStatus writes the documented body of an HTTP-level error.
func writeHTTPStatus(w http.ResponseWriter, code int) {
	writeHTTPError(w, httpError{status: code, body: bodyForHTTP(code, nil)})
}

// gatewayErrorHandler is the gateway's one error handler: every gRPC error and decoding error of the
// JSON front is written as the documented body.
func gatewayErrorHandler(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if ri := requestInfoFrom(ctx); ri != nil && ri.decodeErr != nil {
		err = decodeProblems(ri.decodeErr)
	}
	writeHTTPError(w, fromStatus(err))
}

// decodeProblems turns the JSON front's decoding error into the validation error a handler's
// problems become, so both are keyed and worded alike.
func decodeProblems(err error) error {
	var wire *jsonwire.Error
	if !errors.As(err, &wire) {
		return Invalid("", "request body could not be read: %v", err)
	}
	var p Problems
	for _, pr := range wire.Problems {
		p.Add(pr.Path, "%s", pr.Message)
	}
	p.dropped += wire.Dropped // the decoder lists no more than Problems does, and counts the rest
	return p.Err()
}

// routingErrorHandler answers paths and methods the gateway has no route for.
func routingErrorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, code int) {
	writeHTTPStatus(w, code)
}
