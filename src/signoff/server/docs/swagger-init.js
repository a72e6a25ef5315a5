// Starts Swagger UI on /docs. A file rather than an inline script: the page's
// Content-Security-Policy allows scripts from this server only.
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    dom_id: "#swagger-ui",
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
    layout: "BaseLayout",
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    validatorUrl: null,
  });
})();
