// Package rpcerr is the error model both fronts share: the gRPC status errors handlers and the
// frame return (with ErrorInfo, BadRequest and RetryInfo details), Problems for validation, and the
// one mapping from a status to the documented HTTP error body, with its writer.
package rpcerr

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
)

// Exception types of the error body. On gRPC they travel in ErrorInfo: its metadata carries the
// type itself, its Reason the UPPER_SNAKE_CASE form (AIP-193), so both fronts say the same thing.
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

// Keys and texts of the error body and of ErrorInfo.
const (
	errorDomain = "yardstick"
	// MsgInvalid is the message of every 400.
	MsgInvalid = "Invalid input."
	// InfoValidation is the additionalInfo of a 400 that lists its problems.
	InfoValidation = "See validationErrors for every problem found."
	// InfoKey and ExceptionKey are ErrorInfo's metadata keys of additionalInfo and exceptionType.
	InfoKey      = "additionalInfo"
	ExceptionKey = "exceptionType"
	// NonFieldErrors is the validationErrors key of problems across fields.
	NonFieldErrors = "nonFieldErrors"
	// ReasonOverloaded is Overloaded's ErrorInfo reason, which tells it from the other
	// ResourceExhausted answers (a message over the size limit, Throttled).
	ReasonOverloaded = "OVERLOADED"
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
		Metadata: map[string]string{ExceptionKey: exception, InfoKey: info},
	}
}

// New builds a gRPC status carrying the exception type and the additional info.
func New(code codes.Code, exception, message, info string, extra ...protoadapt.MessageV1) error {
	return withDetails(code, message, append([]protoadapt.MessageV1{errorInfo(exception, info)}, extra...)...)
}

// withDetails is a status error with details, or without them should one not marshal.
func withDetails(code codes.Code, message string, details ...protoadapt.MessageV1) error {
	st, err := status.New(code, message).WithDetails(details...)
	if err != nil {
		return status.Error(code, message)
	}
	return st.Err()
}

// Retry is a refusal's delay in whole seconds, rounded up and at least 1, and its RetryInfo.
func Retry(d time.Duration) (int64, *errdetails.RetryInfo) {
	secs := max(int64(math.Ceil(d.Seconds())), 1)
	return secs, &errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(secs) * time.Second)}
}

// NotAuthenticated is the answer for credentials that cannot be verified, or no token at all.
func NotAuthenticated(message, info string) error {
	return New(codes.Unauthenticated, ExceptionNotAuthenticated, message, info)
}

// ErrorInfo reasons of a token that was sent and refused, one per thing the caller can do about it
// (a missing token and bad credentials keep NOT_AUTHENTICATED).
const (
	ReasonTokenExpired      = "TOKEN_EXPIRED"       // get a new token
	ReasonTokenOtherService = "TOKEN_OTHER_SERVICE" // get one from this service
	ReasonTokenRevoked      = "TOKEN_REVOKED"       // the client changed: log in again
	ReasonTokenInvalid      = "TOKEN_INVALID"       // not a token of this deployment, or altered
)

// InvalidToken is the answer for a token that was sent and refused for reason (a ReasonToken*);
// info says what to do and becomes the error_description, so it must not quote the token.
func InvalidToken(reason, message, info string) error {
	i := errorInfo(ExceptionNotAuthenticated, info)
	i.Reason = reason
	return withDetails(codes.Unauthenticated, message, i)
}

var tokenReasons = map[string]bool{ReasonTokenExpired: true, ReasonTokenOtherService: true, ReasonTokenRevoked: true, ReasonTokenInvalid: true}

// bearerChallenge is the WWW-Authenticate of a 401: RFC 6750 §3's plain challenge, or for a
// token that was refused its error="invalid_token" with the description (§3: printable ASCII
// without '"' and '\'; anything else becomes a space).
func bearerChallenge(info *errdetails.ErrorInfo) string {
	if info == nil || info.Domain != errorDomain || !tokenReasons[info.Reason] {
		return `Bearer realm="yardstick"`
	}
	desc := []byte(info.Metadata[InfoKey])
	for i, c := range desc {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			desc[i] = ' '
		}
	}
	return `Bearer realm="yardstick", error="invalid_token", error_description="` + string(desc) + `"`
}

// PermissionDenied is the answer for a client or token without the needed permission.
func PermissionDenied(message, info string) error {
	return New(codes.PermissionDenied, ExceptionPermissionDenied, message, info)
}

// Throttled is the answer when failed attempts exhausted a client's or an address's budget.
func Throttled(retryAfter time.Duration) error {
	secs, ri := Retry(retryAfter)
	return New(codes.ResourceExhausted, ExceptionThrottled, "Too many failed attempts.", fmt.Sprintf("Retry after %d seconds.", secs), ri)
}

// Internal is the answer for a fault of ours; the cause is logged, never sent.
func Internal() error {
	b := BodyFor(http.StatusInternalServerError, nil)
	return New(codes.Internal, b.ExceptionType, b.Message, b.AdditionalInfo)
}

// HTTP is what an error becomes on the HTTP front.
type HTTP struct {
	Status     int
	Body       ErrorBody
	RetryAfter int64  // seconds; 0 = no Retry-After header
	Challenge  string // a 401's WWW-Authenticate; "" = RFC 6750's plain Bearer challenge
}

// ToHTTP turns any error of the gRPC side into the HTTP status and body.
func ToHTTP(err error) HTTP {
	var hse *runtime.HTTPStatusError
	if errors.As(err, &hse) {
		return HTTP{Status: hse.HTTPStatus, Body: BodyFor(hse.HTTPStatus, hse.Err)}
	}
	st := status.Convert(err)
	info, bad, retryAfter := detailsOf(st)
	out := HTTP{Body: ErrorBody{Message: st.Message()}, RetryAfter: retryAfter}
	if info != nil && info.Domain == errorDomain {
		out.Body.ExceptionType = info.Metadata[ExceptionKey]
		out.Body.AdditionalInfo = info.Metadata[InfoKey]
	}
	switch st.Code() {
	case codes.InvalidArgument:
		out.Status = http.StatusBadRequest
		out.Body = ErrorBody{Message: MsgInvalid, ExceptionType: ExceptionValidation,
			AdditionalInfo: cmp.Or(out.Body.AdditionalInfo, InfoValidation), ValidationErrors: validationErrors(bad, st.Message())}
	case codes.Unauthenticated:
		out.Status, out.Body.ExceptionType = http.StatusUnauthorized, ExceptionNotAuthenticated
		out.Challenge = bearerChallenge(info)
	case codes.PermissionDenied:
		out.Status, out.Body.ExceptionType = http.StatusForbidden, ExceptionPermissionDenied
	case codes.NotFound:
		out.Status, out.Body.ExceptionType = http.StatusNotFound, ExceptionNotFound
	case codes.ResourceExhausted:
		exhausted(&out, info)
	case codes.Unavailable, codes.Canceled, codes.DeadlineExceeded:
		out.Status = http.StatusServiceUnavailable
		if info == nil || info.Domain != errorDomain { // one of ours (logins busy) keeps its words
			out.Body = BodyFor(out.Status, nil)
		}
	default:
		out.Status = http.StatusInternalServerError
		out.Body = BodyFor(out.Status, nil)
	}
	return out
}

// Record is err as the error of one answer of a gRPC batch or group stream: the status a unary
// call ending with err would get (code, message, details), as yardstick.batch.v1.Status.
func Record(err error) *batchv1.Status {
	p := status.Convert(err).Proto()
	return &batchv1.Status{Code: p.GetCode(), Message: p.GetMessage(), Details: p.GetDetails()}
}

// detailsOf is a status's ErrorInfo, BadRequest and RetryInfo's delay in whole seconds, rounded up
// (nil and 0 when absent).
func detailsOf(st *status.Status) (info *errdetails.ErrorInfo, bad *errdetails.BadRequest, retryAfter int64) {
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
		case *errdetails.BadRequest:
			bad = d
		case *errdetails.RetryInfo:
			retryAfter = int64(math.Ceil(d.GetRetryDelay().AsDuration().Seconds()))
		}
	}
	return info, bad, retryAfter
}

// exhausted sets the answer to ResourceExhausted: throttled (429), overloaded (503), or over a
// size limit (413).
func exhausted(out *HTTP, info *errdetails.ErrorInfo) {
	switch {
	case out.Body.ExceptionType == ExceptionThrottled:
		out.Status = http.StatusTooManyRequests
	case info != nil && info.Domain == errorDomain && info.Reason == ReasonOverloaded:
		// The memory budget is full (internal/admission): the request is fine, the moment is not.
		out.Status = http.StatusServiceUnavailable
	default:
		// gRPC's own message-size limit speaks ResourceExhausted too.
		out.Status = http.StatusRequestEntityTooLarge
		out.Body = ErrorBody{Message: "Request too large.", ExceptionType: ExceptionTooLarge, AdditionalInfo: "The request exceeds the size limit."}
	}
}

// BodyFor is the body of an error that arises on the HTTP front itself.
func BodyFor(code int, cause error) ErrorBody {
	if code == http.StatusBadRequest {
		msg := "Malformed request."
		if cause != nil {
			msg = cause.Error()
		}
		return ErrorBody{Message: MsgInvalid, ExceptionType: ExceptionValidation, AdditionalInfo: InfoValidation,
			ValidationErrors: map[string][]string{NonFieldErrors: {msg}}}
	}
	if b, ok := frontBodies[code]; ok {
		return b
	}
	return frontBodies[http.StatusInternalServerError]
}

var frontBodies = map[int]ErrorBody{
	http.StatusNotFound:              {Message: "Not found.", ExceptionType: ExceptionNotFound, AdditionalInfo: "No endpoint has this path; see /openapi.json."},
	http.StatusMethodNotAllowed:      {Message: "Method not allowed.", ExceptionType: ExceptionMethodNotAllowed, AdditionalInfo: "Endpoints take POST with a JSON body."},
	http.StatusRequestTimeout:        {Message: "Request timeout.", ExceptionType: ExceptionTimeout, AdditionalInfo: "The request body arrived too slowly (see the minimum body rate)."},
	http.StatusRequestEntityTooLarge: {Message: "Request too large.", ExceptionType: ExceptionTooLarge, AdditionalInfo: "The request body exceeds the size limit."},
	http.StatusUnsupportedMediaType:  {Message: "Unsupported media type.", ExceptionType: ExceptionUnsupportedType, AdditionalInfo: "Send Content-Type: application/json."},
	http.StatusServiceUnavailable:    {Message: "Service unavailable.", ExceptionType: ExceptionAPI, AdditionalInfo: "The service is not ready or is shutting down; retry shortly."},
	http.StatusInternalServerError:   {Message: "Internal error.", ExceptionType: ExceptionAPI, AdditionalInfo: "The request could not be completed; it has been logged."},
}

// validationErrors keys every problem as the original API does, by the request's top-level field
// (`items`; rules across fields under nonFieldErrors); an element's problem starts with its path.
func validationErrors(bad *errdetails.BadRequest, message string) map[string][]string {
	out := map[string][]string{}
	for _, v := range bad.GetFieldViolations() {
		key, desc := topLevel(v.GetField()), v.GetDescription()
		if v.GetField() != "" && key != v.GetField() {
			desc = v.GetField() + ": " + desc
		}
		out[key] = append(out[key], desc)
	}
	if len(out) == 0 && message != "" && message != MsgInvalid {
		// An InvalidArgument without field details (a gRPC library's own) says it all in its message.
		out[NonFieldErrors] = []string{message}
	}
	return out
}

// topLevel is the top-level field of an element path: items[3].result → items, "" → nonFieldErrors.
func topLevel(path string) string {
	if path == "" {
		return NonFieldErrors
	}
	if i := strings.IndexAny(path, ".["); i > 0 {
		return path[:i]
	}
	return path
}

// Overloaded is the answer when the memory budget cannot take a request now: ResourceExhausted
// with RetryInfo and reason OVERLOADED (on HTTP: 503 APIException with Retry-After).
func Overloaded(retryAfter time.Duration) error {
	secs, ri := Retry(retryAfter)
	info := errorInfo(ExceptionAPI, fmt.Sprintf("Too much large work is in progress; retry after %d seconds.", secs))
	info.Reason = ReasonOverloaded
	return withDetails(codes.ResourceExhausted, "Service busy.", info, ri)
}
