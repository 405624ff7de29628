extern "C" const char *sdkapp_greeting() { return "Hello from the plugin"; }
