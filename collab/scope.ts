// The API key scope of live editing and of the documents area: one pair, since both reach the same
// documents. Declared here, where the hub lives, and used by the documents policy.
export const DOCUMENTS_SCOPE = { name: 'documents', description: 'documents: bodies, versions, sharing, contexts, favorites, exports' } as const;
