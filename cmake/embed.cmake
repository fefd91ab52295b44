# Turns a text file into a C source defining `const char NAME[]` and
# `const unsigned long NAME_len`, so the library carries it (the template
# engine) without depending on where it was built.
#   cmake -DINPUT=engine.lua -DOUTPUT=engine_lua.c -DNAME=qjit__engine_lua -P embed.cmake
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR len "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}" "/* generated from ${INPUT}; do not edit */\nconst char ${NAME}[] = {\n${bytes}0x00};\nconst unsigned long ${NAME}_len = ${len};\n")
