/**
 * The publisher's JSON-LD context (ontologies/context/sosa-stream.jsonld, served at the
 * protocol's `CONTEXT_PATH`), bundled so that no document is ever fetched to decode an element.
 * A test checks it equals the served file.
 */
export const sosaStreamContext = {
  "@context": {
    "@version": 1.1,
    "sosa": "http://www.w3.org/ns/sosa/",
    "ssn": "http://www.w3.org/ns/ssn/",
    "prov": "http://www.w3.org/ns/prov#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "datex": "http://vocab.datex.org/terms#",
    "qudt": "http://qudt.org/schema/qudt/",
    "unit": "http://qudt.org/vocab/unit/",
    "Observation": "sosa:Observation",
    "madeBySensor": {
      "@id": "sosa:madeBySensor",
      "@type": "@id"
    },
    "observedProperty": {
      "@id": "sosa:observedProperty",
      "@type": "@id"
    },
    "hasFeatureOfInterest": {
      "@id": "sosa:hasFeatureOfInterest",
      "@type": "@id"
    },
    "hasResult": {
      "@id": "sosa:hasResult",
      "@type": "@id"
    },
    "hasSimpleResult": {
      "@id": "sosa:hasSimpleResult"
    },
    "resultTime": {
      "@id": "sosa:resultTime",
      "@type": "xsd:dateTime"
    },
    "phenomenonTime": {
      "@id": "sosa:phenomenonTime",
      "@type": "xsd:dateTime"
    },
    "generatedAtTime": {
      "@id": "prov:generatedAtTime",
      "@type": "xsd:dateTime"
    },
    "QuantityValue": "qudt:QuantityValue",
    "numericValue": {
      "@id": "qudt:numericValue"
    },
    "hasUnit": {
      "@id": "qudt:hasUnit",
      "@type": "@id"
    }
  }
};
