// The guardrails domain's GraphQL types and fields register on the builder here.
export {};
