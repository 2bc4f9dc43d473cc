from compat.check import console_main

console_main()
