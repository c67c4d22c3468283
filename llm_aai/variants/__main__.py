from llm_aai.cli.variants import main

raise SystemExit(main())
