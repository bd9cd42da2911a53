// Starts Swagger UI on this service's own OpenAPI document. Everything it loads comes from this
// service: no validator badge, no CDN. "Authorize" runs the document's OAuth2 client-credentials
// flow against /authToken; the token then goes on every "Try it out" call.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    tryItOutEnabled: true,
    displayRequestDuration: true,
    defaultModelsExpandDepth: 0,
  });
});
