package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Exception types of the error body (DESIGN.md §2). On gRPC they travel as the Reason of a
// google.rpc.ErrorInfo detail, so both fronts say the same thing.
const (
	ExceptionValidation       = "ValidationError"
	ExceptionNotAuthenticated = "NotAuthenticated"
	ExceptionPermissionDenied = "PermissionDenied"
	ExceptionNotFound         = "NotFound"
	ExceptionMethodNotAllowed = "MethodNotAllowed"
	ExceptionTooLarge         = "RequestTooLarge"
	ExceptionUnsupportedType  = "UnsupportedMediaType"
	ExceptionThrottled        = "Throttled"
	ExceptionAPI              = "APIException"
)

const (
	errorDomain      = "yardstick"
	msgInvalid       = "Invalid input."
	infoValidation   = "See validationErrors for every problem found."
	infoKey          = "additionalInfo"
	nonFieldErrorKey = "nonFieldErrors"
)

// ErrorBody is the JSON body of every non-2xx answer of the HTTP front.
type ErrorBody struct {
	Message          string              `json:"message"`
	ExceptionType    string              `json:"exceptionType"`
	AdditionalInfo   string              `json:"additionalInfo"`
	ValidationErrors map[string][]string `json:"validationErrors,omitempty"`
}

// statusError builds a gRPC status carrying the exception type and the additional info.
func statusError(code codes.Code, exception, message, info string, extra ...protoadapt.MessageV1) error {
	details := append([]protoadapt.MessageV1{&errdetails.ErrorInfo{
		Reason: exception, Domain: errorDomain, Metadata: map[string]string{infoKey: info},
	}}, extra...)
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
func fromStatus(err error) httpError { return fromStatusWithBody(err, nil) }

// fromStatusWithBody is fromStatus for the JSON front, which still has the request body to
// locate a decoding error in.
func fromStatusWithBody(err error, body []byte) httpError {
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
		out.body.ExceptionType = info.Reason
		out.body.AdditionalInfo = info.Metadata[infoKey]
	}
	switch st.Code() {
	case codes.InvalidArgument:
		out.status = http.StatusBadRequest
		out.body.ExceptionType = ExceptionValidation
		out.body.ValidationErrors = validationErrors(bad, st.Message(), body)
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
		if out.body.ExceptionType == ExceptionThrottled {
			out.status = http.StatusTooManyRequests
		} else {
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

// protojsonField finds the field a protojson decoding error is about, e.g.
// `proto: (line 1:14): invalid value for int32 field priorAbility: "x"`.
var (
	protojsonField    = regexp.MustCompile(`field ([A-Za-z_][A-Za-z0-9_]*)`)
	protojsonPosition = regexp.MustCompile(`\(line (\d+):(\d+)\)`)
)

func validationErrors(bad *errdetails.BadRequest, message string, body []byte) map[string][]string {
	out := map[string][]string{}
	for _, v := range bad.GetFieldViolations() {
		key := v.GetField()
		if key == "" {
			key = nonFieldErrorKey
		}
		out[key] = append(out[key], v.GetDescription())
	}
	if len(out) == 0 && message != "" && message != msgInvalid {
		// A decoding error of the JSON front (wrong type, malformed JSON): name the field when the
		// decoder did.
		key := nonFieldErrorKey
		if m := protojsonField.FindStringSubmatch(message); m != nil {
			key = m[1]
		}
		if pos := protojsonPosition.FindStringSubmatch(message); pos != nil {
			line, _ := strconv.Atoi(pos[1])
			col, _ := strconv.Atoi(pos[2])
			if path := jsonPathAt(body, line, col); path != "" {
				key = path
			}
		}
		out[key] = append(out[key], cleanDecodeMessage(message))
	}
	return out
}

var protojsonPrefix = regexp.MustCompile(`^proto:\s*(\(line \d+:\d+\):\s*)?`)

// cleanDecodeMessage drops protojson's prefix and its deliberately varied spacing (it may be a
// non-breaking space), so the message is the same in every build.
func cleanDecodeMessage(msg string) string {
	msg = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return ' '
		}
		return r
	}, msg)
	msg = strings.Join(strings.Fields(msg), " ")
	return "request body: " + protojsonPrefix.ReplaceAllString(msg, "")
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
	var body []byte
	if ri := requestInfoFrom(ctx); ri != nil {
		body = ri.body
	}
	e := fromStatusWithBody(err, body)
	noteClientFromMetadata(ctx, r)
	writeHTTPError(w, e)
}

// routingErrorHandler answers paths and methods the gateway has no route for.
func routingErrorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, code int) {
	writeHTTPStatus(w, code)
}
