// Curated words the demo catalog is built from: real sector, skill and role names, so the demo
// reads like a marketplace rather than lorem ipsum.

export const sectors = [
  "Artificial Intelligence", "Fintech", "Healthcare", "E-commerce", "Education", "Cybersecurity",
  "Climate Tech", "Logistics", "Media", "Gaming", "Real Estate", "Insurance", "Biotech",
  "Developer Tools", "Human Resources", "Legal Tech", "Automotive", "Energy", "Travel",
  "Public Sector", "Telecommunications", "Agriculture", "Manufacturing", "Retail",
] as const;

export const skills: ReadonlyArray<readonly [name: string, category: string]> = [
  ["Large Language Models", "llm"], ["Prompt Engineering", "llm"], ["Retrieval-Augmented Generation", "llm"],
  ["LLM Fine-tuning", "llm"], ["LangChain", "llm"], ["LLM Evaluation", "llm"], ["Agent Frameworks", "llm"],
  ["Vector Databases", "llm"], ["MLflow", "mlops"], ["Kubeflow", "mlops"], ["Model Serving", "mlops"],
  ["Feature Stores", "mlops"], ["Model Monitoring", "mlops"], ["Ray", "mlops"], ["Weights & Biases", "mlops"],
  ["Computer Vision", "cv"], ["OpenCV", "cv"], ["Object Detection", "cv"], ["Image Segmentation", "cv"],
  ["Video Analytics", "cv"], ["OCR", "cv"], ["Natural Language Processing", "nlp"], ["Speech Recognition", "nlp"],
  ["Machine Translation", "nlp"], ["PyTorch", "ml"], ["TensorFlow", "ml"], ["scikit-learn", "ml"],
  ["Reinforcement Learning", "ml"], ["Recommender Systems", "ml"], ["Time Series Forecasting", "ml"],
  ["SQL", "data"], ["dbt", "data"], ["Apache Spark", "data"], ["Apache Kafka", "data"], ["Airflow", "data"],
  ["Snowflake", "data"], ["BigQuery", "data"], ["Data Modeling", "data"], ["Python", "backend"],
  ["TypeScript", "backend"], ["Node.js", "backend"], ["Go", "backend"], ["Rust", "backend"], ["Java", "backend"],
  ["Kotlin", "backend"], ["PostgreSQL", "backend"], ["GraphQL", "backend"], ["REST API Design", "backend"],
  ["React", "frontend"], ["Next.js", "frontend"], ["Vue.js", "frontend"], ["CSS", "frontend"],
  ["Accessibility", "frontend"], ["Swift", "mobile"], ["Android", "mobile"], ["React Native", "mobile"],
  ["Kubernetes", "devops"], ["Terraform", "devops"], ["AWS", "devops"], ["Google Cloud", "devops"],
  ["CI/CD", "devops"], ["Observability", "devops"], ["Application Security", "security"],
  ["Penetration Testing", "security"], ["Identity and Access Management", "security"], ["Figma", "design"],
  ["UX Research", "design"], ["Product Management", "product"], ["Technical Writing", "product"],
];

export const roles = [
  "Machine Learning Engineer", "Data Scientist", "Data Engineer", "Backend Engineer", "Frontend Engineer",
  "Full-Stack Engineer", "MLOps Engineer", "Platform Engineer", "Site Reliability Engineer",
  "Computer Vision Engineer", "NLP Engineer", "AI Research Scientist", "Applied Scientist",
  "Product Designer", "Product Manager", "Engineering Manager", "Security Engineer", "Mobile Engineer",
  "Analytics Engineer", "Solutions Architect", "Developer Advocate", "QA Engineer", "Technical Writer",
  "Prompt Engineer", "LLM Engineer", "Data Analyst",
] as const;

export const seniorityTitles = {
  intern: "Intern", junior: "Junior", mid: "", senior: "Senior", lead: "Lead", principal: "Principal",
  executive: "Distinguished",
} as const;

export const agentCategories = [
  "recruiting", "coding", "customer_support", "data_analysis", "sales", "marketing", "legal", "finance",
  "research", "operations",
] as const;

export const agentCapabilities = [
  "resume screening", "interview scheduling", "code review", "test generation", "ticket triage",
  "knowledge-base answers", "SQL generation", "dashboard summaries", "lead qualification", "email drafting",
  "contract review", "invoice extraction", "literature search", "meeting notes", "translation",
  "web research", "workflow automation", "sentiment analysis", "document classification", "data cleaning",
] as const;

// ISO 3166-1 alpha-2, with a few cities each.
export const places: ReadonlyArray<readonly [country: string, state: string | null, city: string]> = [
  ["US", "CA", "San Francisco"], ["US", "NY", "New York"], ["US", "WA", "Seattle"], ["US", "TX", "Austin"],
  ["US", "MA", "Boston"], ["CA", "ON", "Toronto"], ["CA", "QC", "Montréal"], ["GB", null, "London"],
  ["DE", "BE", "Berlin"], ["DE", "BY", "Munich"], ["FR", null, "Paris"], ["NL", null, "Amsterdam"],
  ["ES", null, "Barcelona"], ["PT", null, "Lisbon"], ["SE", null, "Stockholm"], ["PL", null, "Warsaw"],
  ["BR", "SP", "São Paulo"], ["MX", null, "Mexico City"], ["IN", "KA", "Bengaluru"], ["SG", null, "Singapore"],
  ["JP", null, "Tokyo"], ["AU", "NSW", "Sydney"], ["IE", null, "Dublin"], ["CH", null, "Zürich"],
];

export const currencies: Record<string, string> = {
  US: "USD", CA: "CAD", GB: "GBP", DE: "EUR", FR: "EUR", NL: "EUR", ES: "EUR", PT: "EUR", SE: "SEK",
  PL: "PLN", BR: "BRL", MX: "MXN", IN: "INR", SG: "SGD", JP: "JPY", AU: "AUD", IE: "EUR", CH: "CHF",
};
