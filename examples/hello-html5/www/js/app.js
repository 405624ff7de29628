document.getElementById("greeting").textContent += " (" + navigator.language + ")";
